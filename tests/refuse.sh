# tests/refuse.sh — sourced by the test scripts that check a command's bad options:
# refuse ERRFILE MESSAGE COMMAND [ARGS...] runs the command, which must fail with
# MESSAGE (a grep pattern) on its stderr (kept in ERRFILE); otherwise the test fails.
refuse() {
	refuse_err=$1 refuse_msg=$2
	shift 2
	if "$@" >/dev/null 2>"$refuse_err"; then
		echo "accepted: $*"; exit 1
	fi
	grep -q -e "$refuse_msg" "$refuse_err" ||
		{ echo "no clear error for: $*"; cat "$refuse_err"; exit 1; }
}
