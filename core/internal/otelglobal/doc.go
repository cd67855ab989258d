// Package otelglobal holds the test of core's telemetry against
// OpenTelemetry's global providers: a Client made before an application
// sets an SDK records nothing until then and every operation after. It is
// a package of its own because setting the globals cannot be undone, and
// would change what every other test of package core sees.
//
// Layer: a test, outside the library: it imports core, core/testkit and
// the OpenTelemetry SDK; nothing imports it.
package otelglobal
