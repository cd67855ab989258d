package xerrors

import "errors"

// New is errors.New.
func New(text string) error { return errors.New(text) }

// Is is errors.Is.
func Is(err, target error) bool { return errors.Is(err, target) }
