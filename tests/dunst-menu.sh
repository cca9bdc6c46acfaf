#!/bin/sh
# dunst's context menu ("dmenu" in its config), chosen by the e2e tests
# instead of a person: dunst writes one line per action of each notification
# on screen ("#Approve… (<title>) [<id>,approve]"); this prints the first
# line containing every line of the file named by $1 (the test writes it),
# and nothing when there is no such file. dunst then invokes that action,
# as it would after a person's choice.
choices="$1"
lines="$(cat)"
[ -s "$choices" ] || exit 0
while IFS= read -r wanted; do
  [ -n "$wanted" ] || continue
  lines="$(printf '%s\n' "$lines" | grep -F -- "$wanted")"
done <"$choices"
printf '%s\n' "$lines" | head -n 1
