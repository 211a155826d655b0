#!/usr/bin/env bash
# A two-host cluster on one machine, for trying and testing fpgacomm across
# hosts: two network namespaces joined by a bridge, each with a host name of
# its own, and an Open MPI launch agent that starts a host's processes in
# its namespace; and a third host without ranks, c, where mpirun can run as
# on a cluster's login node. Root only; nothing outside the machine is
# addressed.
#
#   scripts/two_hosts.sh up NAME      # prints the mpirun options to use
#   scripts/two_hosts.sh down NAME    # removes all of it (also after a failed up)
#   scripts/two_hosts.sh check        # says why this machine cannot, status 1
#
# NAME (letters and digits, at most 8) keeps test beds apart: namespaces
# NAMEa, NAMEb and NAMEc, bridge NAMEbr, host names NAME-a, NAME-b and NAME-c, subnet
# 10.77.X.0/24 with X from NAME (the next free X where another bed has it,
# chosen under a lock and kept in the state folder),
# state in /run/fpgacomm-two-hosts/NAME.
# Hosts are given to mpirun by address (10.77.X.2 and .3; c is .4), so
# /etc/hosts is never touched; `hostname` (and every Result) names them
# NAME-a and NAME-b.
# Both `up` and `down` are idempotent: `up` first removes what a previous
# run of the same NAME left.
set -euo pipefail

STATE_ROOT=/run/fpgacomm-two-hosts

usage() {
  echo "usage: $0 up NAME | down NAME | check" >&2
  exit 2
}

check() {
  if [ "$(id -u)" -ne 0 ]; then
    echo "the two-host test bed needs root (network namespaces, a bridge and mounts)"
    return 1
  fi
  for tool in ip unshare nsenter mpirun; do
    command -v "$tool" >/dev/null || { echo "the two-host test bed needs $tool on PATH"; return 1; }
  done
  local probe="fpgacommprobe$$"
  if ! ip netns add "$probe" 2>/dev/null; then
    echo "this machine does not allow network namespaces (ip netns add failed)"
    return 1
  fi
  ip netns del "$probe"
  if ! ip link add "${probe:0:12}br" type bridge 2>/dev/null; then
    echo "this machine does not allow a bridge (ip link add type bridge failed)"
    return 1
  fi
  ip link del "${probe:0:12}br"
}

subnet() {  # 10.77.X, X in 1..250 from the name, or the next one no other bed holds
  local x tries
  x=$(( $(printf '%s' "$1" | cksum | cut -d' ' -f1) % 250 + 1 ))
  for tries in $(seq 250); do
    # Each bed's state names its subnet: asking the kernel (ip addr) races
    # with beds going down, whose changes cut its listing short.
    cat "$STATE_ROOT"/*/subnet 2>/dev/null | grep -qx "10\.77\.$x" || break
    x=$(( x % 250 + 1 ))
  done
  echo "10.77.$x"
}

down() {
  local name=$1 state="$STATE_ROOT/$1"
  for host in a b c; do
    if [ -e "$state/uts-$host" ]; then
      umount "$state/uts-$host" 2>/dev/null || true
    fi
    ip link del "${name}h$host" 2>/dev/null || true  # both veth ends, now (a namespace's go later)
    ip netns del "$name$host" 2>/dev/null || true
  done
  ip link del "${name}br" 2>/dev/null || true
  rm -rf "$state"
}

up() {
  local name=$1 state="$STATE_ROOT/$1" net
  down "$name"
  mkdir -p "$state"
  # One bed at a time chooses its subnet, so two started at once never share one.
  exec 9>"$STATE_ROOT/.lock"
  flock 9
  net=$(subnet "$name")
  echo "$net" > "$state/subnet"
  exec 9>&-
  trap 'down "$name"' ERR
  ip link add "${name}br" type bridge
  ip addr add "$net.1/24" dev "${name}br"
  ip link set "${name}br" up
  local number=2
  for host in a b c; do
    ip netns add "$name$host"
    ip link add "${name}v$host" type veth peer name "${name}h$host"
    ip link set "${name}v$host" netns "$name$host"
    ip link set "${name}h$host" master "${name}br" up
    ip -n "$name$host" addr add "$net.$number/24" dev "${name}v$host"
    ip -n "$name$host" link set "${name}v$host" up
    ip -n "$name$host" link set lo up
    touch "$state/uts-$host"
    unshare --uts="$state/uts-$host" hostname "$name-$host"
    echo "$net.$number $name$host" >> "$state/hosts"
    number=$((number + 1))
  done
  # Open MPI calls the agent as `agent HOST COMMAND...` for every remote host.
  # It stays, as ssh does, a process whose command line names the host.
  cat > "$state/agent" <<EOF
#!/bin/sh
host=\$1; shift
namespace=\$(awk -v host="\$host" '\$1 == host { print \$2 }' "$state/hosts")
[ -n "\$namespace" ] || { echo "two_hosts agent: unknown host \$host" >&2; exit 1; }
nsenter --net=/run/netns/\$namespace --uts="$state/uts-\${namespace#$name}" -- sh -c "\$*"
EOF
  chmod +x "$state/agent"
  trap - ERR
  # What mpirun needs: the hosts, the agent, MPI kept on the bridge, and no
  # binding: each host believes it owns every core, so Open MPI binds rank 0
  # of each to the same core 0, where two busy-polling ranks wait a scheduler
  # tick for each other (8 B latency 4.0 ms instead of 7.9 us, measured).
  # One-sided windows between hosts over TCP need Open MPI's osc/pt2pt
  # (osc/rdma needs RDMA), which Debian's openmpi-mca-params.conf turns off.
  echo "--host $net.2:2,$net.3:2 --mca plm_rsh_agent $state/agent --mca btl tcp,self,vader" \
       "--mca btl_tcp_if_include $net.0/24 --mca oob_tcp_if_include $net.0/24 --bind-to none --mca osc pt2pt" \
       > "$state/mpirun-options"
  cat "$state/mpirun-options"
}

[ $# -ge 1 ] || usage
case $1 in
  check) check ;;
  up|down)
    [ $# -eq 2 ] && [[ $2 =~ ^[a-z][a-z0-9]{0,7}$ ]] || { echo "NAME: a lowercase letter, then up to 7 letters or digits" >&2; usage; }
    "$1" "$2" ;;
  *) usage ;;
esac
