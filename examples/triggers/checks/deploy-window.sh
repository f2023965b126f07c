#!/bin/sh
# Is the deploy window open? Asked by tarry with the run's target (acme/web#7) as the only
# argument; the answer is the exit code: 0 go (open), 3 not yet (asked again later).
#
# The window is weekdays 09:00 to 17:00 Berlin time. A file window/closed (or $WINDOW_DIR/closed)
# closes it by hand, for a freeze; window/open opens it, for this example.

window=${WINDOW_DIR:-$(dirname "$0")/../window}
[ -e "$window/closed" ] && exit 3
[ -e "$window/open" ] && exit 0

day=$(TZ=Europe/Berlin date +%u)     # 1 = Monday … 7 = Sunday
hour=$(TZ=Europe/Berlin date +%H)
case "$day" in
  [1-5]) ;;
  *) exit 3 ;;
esac
case "$hour" in
  09|1[0-6]) exit 0 ;;
  *) exit 3 ;;
esac
