"use strict";
// The Node.js language host runs this directory (PulumiPlugin.yaml) as the khook resource provider.
require("../dist/provider/pulumi/native-main.js");
