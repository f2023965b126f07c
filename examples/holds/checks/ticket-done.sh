#!/bin/sh
# May the deploy of $1 start yet? Asked by tarry, with the run's target as the only argument
# (acme/web#7: a repository and a ticket number). The answer is the exit code:
#
#   exit 0  go: the ticket is done
#   exit 3  not yet: asked again later, nothing counted
#   exit 2  never: the ticket will not be done; the run is refused for good (hold-refused)
#   exit 1  could not tell: counted; five in a row refuse the run (hold-unanswerable)
#
# Every code is mapped explicitly with `case`. A one-liner such as
#   grep -q '^Done' "$file"
# would answer 1 for "not done yet", which tarry must read as "could not tell".
#
# This example keeps its tickets in files (tickets/<number>.status, or $TICKETS_DIR); a real
# check would ask the tracker instead, e.g. status=$(jira issue view "PROJ-$ticket" --plain).
# Whatever it prints is counted and thrown away: write to stderr freely.

ticket=$(printf '%s' "$1" | sed 's/.*[#!]//')
case "$ticket" in
  ''|*[!0-9]*) exit 1 ;;   # no ticket number in the target: could not tell
esac

tickets=${TICKETS_DIR:-$(dirname "$0")/../tickets}
status=$(cat "$tickets/$ticket.status" 2>/dev/null) || exit 1   # unreadable: could not tell

case "$status" in
  Done)       exit 0 ;;
  "Won't Do") exit 2 ;;
  *)          exit 3 ;;
esac
