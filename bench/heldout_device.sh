#!/usr/bin/env bash
# One call on a lent host (the run tool): build, then bench/heldout_campaign.sh
# until DEADLINE_S seconds after the call began, into a folder tarred to
# $OUT/heldout-rFIRST_ROUND.tar.gz every 10 s and at the end: the run tool
# brings back only a few files of $OUT (a campaign's fifty were cut to eight
# once), and a call cut off at its time limit still brings back every launch
# that ended.
#   bench/heldout_device.sh ROUNDS DEADLINE_S FIRST_ROUND
set -u
rounds=${1:-3}
deadline=${2:-470}
first_round=${3:-1}
source bench/lent_build.sh
work=/tmp/heldout-r$first_round
tarred=$out/heldout-r$first_round.tar.gz
mkdir -p "$work"
# The saver stops on its own, between two copies, once the campaign has ended:
# killed, it would leave a half-written copy beside the last one.
ended=/tmp/heldout-r$first_round.ended
rm -f "$ended"
(until [[ -e $ended ]]; do sleep 10; tar czf "$tarred.part" -C "$work" . && mv "$tarred.part" "$tarred"; done) &
saver=$!
bench/heldout_campaign.sh "$work" "$rounds" $((deadline - SECONDS)) "$first_round"
touch "$ended"
wait $saver
tar czf "$tarred" -C "$work" .
cat "$work/campaign.log"
