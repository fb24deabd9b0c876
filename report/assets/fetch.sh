#!/bin/sh
# Re-fetches the ECharts build that report/html.go embeds and checks it is byte for byte the one
# committed. Run from anywhere; needs npm and sha256sum.
#
# We embed dist/echarts.common.min.js of echarts@5.6.0 (the release go-echarts v2.6.7 targets): the
# "common" build has line, bar, pie and scatter charts with grid, legend, tooltip, title, toolbox,
# dataZoom and mark lines — everything the report draws — at 664 KB instead of the full build's 1 MB,
# so every report.html is ~370 KB smaller.
set -eu

version=5.6.0
file=echarts.common.min.js
want=55974cf42cc160e6cf9099cd3ed8cdedfaa9779919fcee7e2272c85f6ca30e27

here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

(cd "$tmp" && npm pack --silent "echarts@$version" >/dev/null && tar xzf "echarts-$version.tgz")
got=$(sha256sum "$tmp/package/dist/$file" | cut -d' ' -f1)
if [ "$got" != "$want" ]; then
	echo "fetch.sh: echarts@$version dist/$file has sha256 $got, want $want" >&2
	exit 1
fi
cp "$tmp/package/dist/$file" "$tmp/package/LICENSE" "$tmp/package/NOTICE" "$here/"
cp "$tmp/package/licenses/LICENSE-d3" "$here/"
echo "report/assets: echarts@$version $file ok ($want)"
