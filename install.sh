#!/bin/sh
# install.sh [PREFIX]: build toolkit as one static binary into PREFIX/bin
# (default /usr/local), with a link toolkit-APPLET beside it for each applet,
# and apply_patch (the name models trained on Codex type). Needs only Go.
set -eu
prefix=${1:-/usr/local}
here=$(cd "$(dirname "$0")" && pwd)
bin="$prefix/bin"
mkdir -p "$bin"
version=$(git -C "$here" describe --tags --always --dirty 2>/dev/null || echo dev)
# Static, reproducible, stripped: runs in an image with nothing but /bin/sh.
(cd "$here" && CGO_ENABLED=0 go build -tags urfave_cli_no_docs -trimpath -ldflags "-s -w -X main.version=0.1.0+$version" -o "$bin/toolkit.new" .)
mv -f "$bin/toolkit.new" "$bin/toolkit"
# The links' names come from the binary: one per applet, and apply_patch.
links=$("$bin/toolkit" links)
for link in $links; do
	ln -sf toolkit "$bin/$link"
done
echo "installed $bin/toolkit and its links" $links
