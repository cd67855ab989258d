// A module of its own for the one-process benchmark of the caller's wait,
// so that the peers it measures liblock against (bsm/redislock,
// go-redsync) are dependencies of this benchmark only, never of liblock's
// module.
module github.com/liblock/liblock/core/internal/waitpeers

go 1.26.0

replace github.com/liblock/liblock => ../../..

require (
	github.com/bsm/redislock v0.9.4
	github.com/go-redsync/redsync/v4 v4.18.1
	github.com/liblock/liblock v0.0.0
	github.com/redis/go-redis/v9 v9.23.0
	golang.org/x/sys v0.48.0
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/go-logr/logr v1.4.4 // indirect
	github.com/go-logr/stdr v1.2.2 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/stretchr/testify v1.12.1 // indirect
	github.com/tetratelabs/wazero v1.12.0 // indirect
	go.opentelemetry.io/auto/sdk v1.2.1 // indirect
	go.opentelemetry.io/otel v1.47.0 // indirect
	go.opentelemetry.io/otel/log v1.47.0 // indirect
	go.opentelemetry.io/otel/metric v1.47.0 // indirect
	go.opentelemetry.io/otel/trace v1.47.0 // indirect
	go.uber.org/atomic v1.12.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
)
