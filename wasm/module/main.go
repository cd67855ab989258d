package main

// Only the exports need GOOS=wasip1; this file lets the package build (and
// go vet ./... run) on other systems too.
func main() {}
