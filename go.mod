module github.com/phasec/phasec

go 1.26.0

require (
	github.com/alecthomas/participle/v2 v2.1.4
	golang.org/x/sys v0.50.0
	gonum.org/v1/gonum v0.17.0
)

require (
	github.com/google/go-cmp v0.7.0
	github.com/spf13/cobra v1.10.2
	github.com/spf13/pflag v1.0.10
)

require github.com/inconshreveable/mousetrap v1.1.0 // indirect

require google.golang.org/protobuf v1.36.12

require (
	github.com/stretchr/testify v1.12.1
	go.yaml.in/yaml/v3 v3.0.5 // indirect
)
