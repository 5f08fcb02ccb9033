// Build-only Go module for gpuready test infrastructure: `promtool check
// metrics`, the Prometheus exposition linter the preflight webhook's metrics
// test runs (test/preflight/test_serve.sh). Built by
// `scripts/build-k8s promtool` into the tools cache like the control plane.
//
// Its own small module: the full prometheus/prometheus module would pull every
// service-discovery SDK into the build, while `check metrics` is exactly
// client_golang's promlint (what promtool itself calls).

module gpuready.local/tools/promtool

go 1.24.0

require github.com/prometheus/client_golang v1.23.2

require (
	github.com/kr/text v0.2.0 // indirect
	github.com/munnerz/goautoneg v0.0.0-20191010083416-a7dc8b61c822 // indirect
	github.com/prometheus/client_model v0.6.2 // indirect
	github.com/prometheus/common v0.67.5 // indirect
	go.yaml.in/yaml/v2 v2.4.3 // indirect
	google.golang.org/protobuf v1.36.12-0.20260120151049-f2248ac996af // indirect
)
