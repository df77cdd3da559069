#!/usr/bin/env bash
# Regenerates po/gpuop.pot from the sources and merges it into each
# po/LANG.po. Run it after changing a message; then translate the new
# entries (msgfmt --statistics po/ko.po shows what is left).
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t sources < <(git ls-files 'src/*.c' 'src/*.h' | sort)
xgettext --from-code=UTF-8 --language=C --add-comments=TRANSLATORS: \
    --keyword=_ --keyword=N_ --keyword=gp_error_set:5 --keyword=fail_at:3 \
    --keyword=key_error:4 --keyword=cd_note_add:8 --flag=fail_at:3:c-format \
    --flag=key_error:4:c-format --flag=cd_note_add:8:c-format \
    --flag=gp_error_set:5:c-format --package-name=gpuop \
    --msgid-bugs-address='the gpuop issue tracker' \
    -o po/gpuop.pot "${sources[@]}"
for po in po/*.po; do
    msgmerge --quiet --update --backup=none --no-fuzzy-matching "$po" po/gpuop.pot
    printf '%s: ' "$po"
    msgfmt --check --statistics -o /dev/null "$po"
done
