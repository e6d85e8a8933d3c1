#!/usr/bin/env bash
# vendor-console.sh — fetch the console's front-end libraries again from the npm registry, at
# the pinned versions, check each package's sha256, and write the files the console serves
# into console/assets/vendor/ (committed: `make test` and the binary need no network).
#
# usage: scripts/vendor-console.sh          re-fetch and rewrite the vendored files
#        scripts/vendor-console.sh --check  re-fetch and fail if the committed files differ
#
# Needs npm (its `npm pack` also checks the registry's own integrity hash). To move to a new
# version, change the version and its sha256 below (printed when they do not match), run the
# script, and commit the result with the new console/assets/vendor/SHA256SUMS.
set -euo pipefail
cd "$(dirname "$0")/.."

# name version sha256-of-the-npm-tarball
PACKAGES=(
	"preact 11.2.0 3c4456766bd32b6b534d52bf4e9c2a29b33e7eedf6e96ed479300ba1a7888ebf"
	"htm 3.1.1 2425b9bee11409177bcabc7f32e319926fc6690c1701c0b257c88bdff2d5ba90"
)
DEST=console/assets/vendor

check=0
if [[ ${1:-} == --check ]]; then
	check=1
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
out=$work/out
mkdir -p "$out"

for entry in "${PACKAGES[@]}"; do
	read -r name version want <<<"$entry"
	(cd "$work" && npm pack --silent "$name@$version" >/dev/null)
	tgz=$work/$name-$version.tgz
	got=$(sha256sum "$tgz" | cut -d' ' -f1)
	if [[ $got != "$want" ]]; then
		echo "vendor-console: $name@$version: sha256 $got, pinned $want" >&2
		exit 1
	fi
	mkdir -p "$work/$name"
	tar -xzf "$tgz" -C "$work/$name"
	cp "$work/$name/package/LICENSE" "$out/$name.LICENSE"
done

# The files the browser loads, as ES modules. The console's CSP allows no inline script, so
# no import map: the hooks' one bare import ("preact") is rewritten to the file beside it.
cp "$work/preact/package/dist/preact.mjs" "$out/preact.mjs"
sed 's|from"preact"|from"./preact.mjs"|g' "$work/preact/package/hooks/dist/hooks.mjs" >"$out/hooks.mjs"
if grep -q 'from"preact"' "$out/hooks.mjs" || ! grep -q 'from"./preact.mjs"' "$out/hooks.mjs"; then
	echo "vendor-console: the hooks' import of preact was not rewritten; check hooks.mjs of the new version" >&2
	exit 1
fi
cp "$work/htm/package/dist/htm.mjs" "$out/htm.mjs"

{
	for entry in "${PACKAGES[@]}"; do
		read -r name version want <<<"$entry"
		printf '# %s@%s npm tarball sha256 %s\n' "$name" "$version" "$want"
	done
	(cd "$out" && sha256sum -- *.mjs *.LICENSE)
} >"$out/SHA256SUMS"

if ((check)); then
	if diff -r "$out" "$DEST" >&2; then
		echo "vendor-console: $DEST matches the pinned packages" >&2
		exit 0
	fi
	echo "vendor-console: $DEST differs from the pinned packages" >&2
	exit 1
fi
mkdir -p "$DEST"
rm -f "$DEST"/*.mjs "$DEST"/*.LICENSE "$DEST"/SHA256SUMS
cp "$out"/* "$DEST"/
echo "vendor-console: wrote $DEST" >&2
