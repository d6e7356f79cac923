// Wrapper main for pulumi-resource-kubernetes. Upstream's cmd/pulumi-resource-kubernetes embeds
// schema-embed.json and terraform-mapping-embed.json, which its own build generates (go generate)
// from the schema.json and terraform-mapping.json beside it; the module zip carries only those
// sources. khook's toolchain (test/harness/toolchain.ts) copies this module to a scratch
// directory, writes both files there from the pinned upstream module's sources (the schema
// stamped with the provider version), and builds.
package main

import (
	_ "embed"

	"github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/provider"
	"github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/version"
)

//go:embed schema-embed.json
var pulumiSchema []byte

//go:embed terraform-mapping-embed.json
var terraformMapping []byte

func main() {
	provider.Serve("kubernetes", version.Version, pulumiSchema, terraformMapping)
}
