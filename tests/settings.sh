#!/bin/sh
# tests/settings.sh — the library's settings are one table (src/settings.c) and the
# README lists that table: every row's variable appears in the README's "Settings"
# section, a number's default on its line, and no file of the library but
# src/settings.c calls getenv().
src=${SRCDIR:-$(dirname "$0")/..}
table="$src/src/settings.c"
readme="$src/README.md"
[ -r "$table" ] && [ -r "$readme" ] || { echo "SKIP: no $table or $readme"; exit 77; }
fail=0
section=$(awk '/^## Settings/ {on = 1; next} on && /^## / {exit} on {print}' "$readme")
[ -n "$section" ] || { echo "FAIL: README.md has no '## Settings' section"; exit 1; }
rows=$(sed -n 's/^[[:space:]]*\[STARGEMM__[A-Z_]*\] = { "\([A-Za-z_]*\)", \([01]\), \([^,]*\),.*/\1 \2 \3/p' "$table")
[ "$(printf '%s\n' "$rows" | wc -l)" -ge 10 ] || { echo "FAIL: could not read the rows of $table"; exit 1; }
while read -r name number dflt; do
	line=$(printf '%s\n' "$section" | grep -F "\`$name\`" | head -n1)
	if [ -z "$line" ]; then
		echo "FAIL: $name (src/settings.c) is not in the README's Settings section"
		fail=1
	elif [ "$number" = 1 ] && [ "$dflt" != NAN ] &&
		! printf '%s\n' "$line" | grep -Fq -e "$dflt"; then
		echo "FAIL: README's line of $name does not give its default $dflt: $line"
		fail=1
	else
		echo "ok: $name"
	fi
done <<ROWS
$rows
ROWS
others=$(grep -ln 'getenv(' "$src"/src/*.c "$src"/codelets/*.c "$src"/sched/*.c |
	grep -v '/src/settings\.c$')
if [ -n "$others" ]; then
	echo "FAIL: getenv() outside src/settings.c: $others"
	fail=1
fi
[ "$fail" = 0 ] && echo "every setting is in the table and in the README: OK"
exit "$fail"
