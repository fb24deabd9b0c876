// Package otlptest provides OpenTelemetry collectors for tests: in-process OTLP receivers over
// HTTP and gRPC that decode every request with the official protobuf types, and endpoints that
// refuse connections or accept them and never answer.
package otlptest
