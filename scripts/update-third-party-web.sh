#!/usr/bin/env bash
# Regenerates crates/triage-web/data/third-party-web.tsv, the tracker list of triage-web, from
# the npm package third-party-web (MIT, by Patrick Hulce; the entity list Lighthouse uses):
# one line per domain pattern with its entity and category, from dist/entities-nostats.json.
#
# Usage: scripts/update-third-party-web.sh [VERSION]   (default: the version in the file now)
# Needs npm and node. Then run `cargo test -p triage-web` and re-bless the golden snapshots
# (`TRIAGE_BLESS=1 cargo test -p triage-cli --test golden`): trackers decide CATS level 4.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
out="$root/crates/triage-web/data/third-party-web.tsv"
version="${1:-$(sed -n 's/^# version: //p' "$out" 2>/dev/null || true)}"
version="${version:-0.30.0}"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "third-party-web@$version" >/dev/null && tar xzf "third-party-web-$version.tgz")
pkg="$work/package"

node - "$pkg" "$version" >"$out.tmp" <<'JS'
const [pkg, version] = process.argv.slice(2);
const entities = require(`${pkg}/dist/entities-nostats.json`);
const meta = require(`${pkg}/package.json`);
if (meta.version !== version) throw new Error(`asked for ${version}, got ${meta.version}`);
const clean = s => String(s).replace(/[\t\r\n]/g, ' ').trim();
const rows = new Set();
for (const e of entities) {
  for (const d of e.domains || []) rows.add(`${clean(d).toLowerCase()}\t${clean(e.name)}\t${clean(e.category || 'other')}`);
}
const lines = [
  `# third-party-web ${version} (npm third-party-web@${version}), ${meta.license} license,`,
  `# Copyright (c) Patrick Hulce, https://github.com/patrickhulce/third-party-web`,
  `# (license text: third-party-web.LICENSE beside this file). Derived from dist/entities-nostats.json`,
  `# by scripts/update-third-party-web.sh: domain pattern, entity, category, tab-separated.`,
  `# "*.example.com" matches example.com and its subdomains; any other pattern that host only.`,
  `# version: ${version}`,
  ...[...rows].sort(),
];
process.stdout.write(lines.join('\n') + '\n');
JS
mv "$out.tmp" "$out"
cp "$pkg/LICENSE" "$root/crates/triage-web/data/third-party-web.LICENSE"
echo "wrote $out ($(grep -vc '^#' "$out") patterns, third-party-web $version)"
