# Sourced by the scripts that make one call on a lent host (heldout_device.sh,
# topology_probe.sh, busy_cores_probe.sh): builds this tree into
# FPGACOMM_PYTHON's environment (the lent hosts' /opt/torch/.venv by default)
# and sets `out` ($OUT, where the run tool collects the results) and FPGACOMM
# (the command it installed); the build's log goes to $out/setup.log. Lent
# hosts run as root, so mpirun is allowed to.
out=${OUT:-/tmp/out}
export FPGACOMM_PYTHON=${FPGACOMM_PYTHON:-/opt/torch/.venv/bin/python}
export FPGACOMM=$(dirname "$FPGACOMM_PYTHON")/fpgacomm  # setup.sh installs into that Python's environment
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
scripts/setup.sh > "$out/setup.log" 2>&1 || { tail -40 "$out/setup.log"; exit 1; }
echo "built after $SECONDS s"
