#!/usr/bin/env bash
# One call on a lent host (the run tool): build, then bench/heldout_campaign.sh
# until DEADLINE_S seconds after the call began, written straight into
# $OUT/heldout-rFIRST_ROUND (so that a call cut off at its time limit still
# brings back every launch that ended).
#   bench/heldout_device.sh ROUNDS DEADLINE_S FIRST_ROUND
set -u
rounds=${1:-3}
deadline=${2:-470}
first_round=${3:-1}
out=${OUT:-/tmp/out}
export FPGACOMM_PYTHON=${FPGACOMM_PYTHON:-/opt/torch/.venv/bin/python}
export FPGACOMM=$(dirname "$FPGACOMM_PYTHON")/fpgacomm  # setup.sh installs into that Python's environment
scripts/setup.sh > "$out/setup.log" 2>&1 \
    || { tail -40 "$out/setup.log"; exit 1; }
echo "built after $SECONDS s"
work=$out/heldout-r$first_round
bench/heldout_campaign.sh "$work" "$rounds" $((deadline - SECONDS)) "$first_round"
cat "$work/campaign.log"
