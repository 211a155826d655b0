"""Simulated FPGA networks: the papers' fabrics at frame level, and the
measurements fpgacomm makes on real hardware run on them.

A preset (``vcsn(16)``, ``dcn_ring(16)``, ``cuscomnet_torus(4, 4)``, ...)
fills a ``_core.fabric.FabricSpec`` with the papers' numbers; its docstring
says where each comes from and which numbers are ours. The functions
``latency``, ``bandwidth``, ``traffic``, ``run_schedule``, ``beff_ring``,
``one_sided`` and ``virtual_streams`` (VCSN's virtual links, after
``Fabric.connect`` has written the MAC tables) run the C++ discrete-event
simulator (src/fabric) and return a ``Result`` like a real run, with
simulated times in seconds and B/s.

    >>> from fpgacomm import fabric
    >>> fabric.bandwidth("vcsn", size=64 << 20).rows[0]["bandwidth"]   # ~12.44e9

docs/FABRIC.md describes the model.
"""

from __future__ import annotations

import dataclasses
import datetime
import math
import os
import platform
import sys

from .. import _core
from ..models.beff import BITTWARE_520N, ChannelModel
from ..params import byte_sizes, usage_error
from ..results.result import Result
from ..runtime.interrupts import Interrupted
from . import mpi_library as mpi_rules
from . import platform as platform_files

_sim = _core.fabric
UsageError = _core.UsageError

MiB = 1 << 20
# The simulator's eager threshold when none is set: no message is long enough.
NEVER_RENDEZVOUS = (1 << 63) - 1
# The VCSN paper section 4.2.2: "all the cables used in this measurement have the
# same three meters length"; light in fibre covers 0.2 m/ns.
CABLE_3M = 3.0 / 2.0e8

# --- the VCSN paper (VCSN), shared by dcn_ring, vcsn and vcsn_fat_tree ----------
# Four lanes of 25.78125 Gbaud (QSFP28), eq. 1 and 2.
QSFP28_LANE_RATE = 25.78125e9
# Table 1, crossbar to crossbar over a loopback.
VCSN_LINK_LATENCY = 851.1e-9
DCN_LINK_LATENCY = 490.9e-9
# Our assumption: Mellanox's port-to-port latency of the MSN2100 (Spectrum)
# switch; the seed gives only the sum of Table 1.
MSN2100_LATENCY = 300e-9
MSN2100_PORTS = 16
# Section 4.2.1: on-board DDR4 bandwidth; section 3.3: two mSGDMA read/write pairs.
D5005_MEMORY_BANDWIDTH = 19.2e9
# Table 5 and eq. 6 (with the section 6.3 correction). The seed gives no
# interrupt figure: its cost is inside the measured barrier correction.
VCSN_HOST_COSTS = dict(
    crossbar_setup=1.35e-6,
    topology_reconfiguration=1.24e-4,
    interrupt=0.0,
    barrier_per_round=3.34e-5,
    barrier_base=5.84e-6,
    barrier_extra_long=210e-6,
    barrier_extra_short=52e-6,
    long_work_threshold=500e-6,
    fpgas_per_server=2,
)


@dataclasses.dataclass
class Fabric:
    """A simulated fabric: the preset's name, its arguments and the spec."""

    name: str
    arguments: dict
    spec: object  # _core.fabric.FabricSpec
    #: VCSN writes its MAC tables before a schedule (topology reconfiguration).
    virtual_topology: bool = False
    #: FSHMEM: the target's handler turn-round before a GET reply.
    handler_latency: float = 0.0
    #: Where each argument came from, where not from the preset's defaults
    #: and paper: {"source": "fit", "calibration": DIR} (platform.py).
    provenance: dict = dataclasses.field(default_factory=dict)
    #: Parameter sets (the arguments' keys) drawn for a prediction's uncertainty.
    draws: list = dataclasses.field(default_factory=list)
    #: The calibration record of a fitted platform (platform.py, calibrate fit), {} for none.
    calibration: dict = dataclasses.field(default_factory=dict)
    _described: tuple = dataclasses.field(default=(), repr=False, compare=False)

    @property
    def nodes(self) -> int:
        return self.spec.nodes

    def connect(self, source, destination) -> None:
        """Writes an entry of a node's MAC table (VCSN, section 3.4 of the
        VCSN paper): virtual port `source` = (node, port, vport) sends to
        `destination`, a (node, port, vport) or a MAC address such as
        "02:00:00:05:00:01" (see mac_address). The simulator checks the
        table when it runs: an unknown address, a virtual port the fabric
        lacks or two senders into one virtual port is an error."""
        node, port, vport = _virtual_port(source, "source")
        self.spec.add_mac_entry(node, port, vport, _mac(destination))

    def to_json(self) -> str:
        """The fabric as a platform file (schema fpgacomm.platform/1): every
        argument of its preset with its unit and provenance, the MAC table,
        the draws and a fitted platform's calibration record; docs/FABRIC.md,
        "Platform files"."""
        entry = PRESETS[self.name]
        text = platform_files.dump(
            platform_files.Platform(
                self.name,
                dict(self.arguments),
                dict(self.provenance),
                list(self.draws),
                self.spec.mac_table,
                self.spec.link_scales,
                self.spec.seed,
                self.calibration,
            ),
            entry.reference,
            entry.units,
        )
        # A platform file holds the preset's arguments: a spec changed by hand
        # elsewhere would read back as another fabric.
        written, here = Fabric.from_json(text)._spec_params(), self._spec_params()
        changed = sorted(key for key in here if written[key] != here[key])
        if changed:
            raise UsageError(
                f"fabric: {self.name}'s spec was changed outside its preset's arguments "
                f"({', '.join(changed)}), which a platform file cannot hold; change the preset's "
                f"arguments instead (fabric.with_arguments, fabric platform --set)"
            )
        return text

    @staticmethod
    def from_json(text: str, where: str = "platform") -> Fabric:
        """The fabric a platform file describes (to_json's inverse: the same
        spec, so the same simulated times to the bit). A file of another
        schema, an unknown preset or parameter, or a missing, negative or
        non-finite value is a UsageError naming it (`where`: the file)."""
        parsed = platform_files.parse(
            text, {name: (entry.reference, entry.units) for name, entry in PRESETS.items()}, where
        )
        fab = preset(parsed.preset, **parsed.values)
        fab.provenance, fab.draws, fab.calibration = parsed.provenance, parsed.draws, parsed.calibration
        for node, port, vport, destination in parsed.mac_table:
            fab.connect((node, port, vport), destination)
        for device, port, factor in parsed.link_scales:
            fab.spec.scale_link(device, port, factor)
        fab.spec.seed = parsed.seed
        return fab

    def describe(self) -> dict:
        """The topology the simulator builds (its description, nodes, devices,
        levels and planes), built once per shape: at a hundred thousand
        nodes building it takes a good part of a second."""
        spec = self.spec
        shape = (
            spec.topology,
            spec.nodes,
            spec.rows,
            spec.cols,
            spec.ports_per_node,
            spec.switch_ports,
            spec.fpgas_per_host,
        )
        if not self._described or self._described[0] != shape:
            self._described = (shape, _sim.describe(spec))
        return self._described[1]

    def params(self) -> dict:
        """Every parameter of the fabric, for a Result's params."""
        return {"topology": self.describe()["topology"], **self._spec_params()}

    def _spec_params(self) -> dict:
        """params() but the topology's description (which builds it)."""
        spec = self.spec
        return {
            "fabric": self.name,
            "fabric_arguments": dict(self.arguments),
            "access_link": _link_params(spec.access_link),
            "trunk_link": _link_params(spec.trunk_link),
            "framing": _framing_params(spec.framing),
            "trunk_framing": None if spec.trunk_framing is None else _framing_params(spec.trunk_framing),
            "hub": _device_params(spec.hub),
            "switch": _device_params(spec.sw),
            "host": _device_params(spec.host),
            "node": {
                **{
                    key: _number(getattr(spec.node, key))
                    for key in (
                        "app_latency",
                        "dma_engines",
                        "dma_bandwidth",
                        "dma_latency",
                        "send_overhead",
                        "recv_overhead",
                        "gap",
                        "rendezvous_latency",
                    )
                },
                # No threshold (the FPGA presets): every message is eager.
                "eager_threshold": (
                    None if spec.node.eager_threshold == NEVER_RENDEZVOUS else spec.node.eager_threshold
                ),
            },
            "host_costs": {key: getattr(spec.host_costs, key) for key in VCSN_HOST_COSTS},
            "virtual_ports_per_port": spec.virtual_ports_per_port,
            "mac_table": [list(entry) for entry in spec.mac_table],
            "handler_latency": self.handler_latency,
            "seed": spec.seed,
            **({"host_link": _link_params(spec.host_link)} if spec.topology == "cluster" else {}),
            "provenance": dict(self.provenance),
        }


def _number(value: float):
    """JSON has no infinity: an unbounded quantity is recorded as None."""
    return None if isinstance(value, float) and math.isinf(value) else value


def _framing_params(framing) -> dict:
    return {
        key: getattr(framing, key)
        for key in (
            "name",
            "header_bytes",
            "trailer_bytes",
            "gap_bytes",
            "max_payload",
            "payload_unit",
            "min_payload",
            "bit_error_rate",
        )
    }


def mac_address(node: int, port: int, vport: int) -> str:
    """The MAC address of virtual port `vport` of physical port `port` of
    `node` in a simulated VCSN: 02:NN:NN:NN:PP:VV."""
    return _sim.mac_to_string(_sim.mac_address(*_virtual_port((node, port, vport), "virtual port")))


def _virtual_port(value, what: str) -> tuple:
    if (
        not isinstance(value, (tuple, list))
        or len(value) != 3
        or not all(isinstance(v, int) and 0 <= v < (1 << 24) for v in value)
    ):
        raise UsageError(f"fabric: {what} {value!r}; give (node, port, vport), whole numbers of 0 or more")
    return tuple(value)


def _mac(destination) -> int:
    if isinstance(destination, str):
        octets = destination.split(":")
        try:
            if len(octets) == 6 and all(len(o) == 2 for o in octets):
                return int("".join(octets), 16)
        except ValueError:
            pass
        raise UsageError(f"fabric: MAC address {destination!r}; give six hex octets as 02:00:00:05:00:01")
    return _sim.mac_address(*_virtual_port(destination, "destination"))


def _link_params(link) -> dict:
    return {
        "lane_rate": link.lane_rate,
        "lanes": link.lanes,
        "coding": link.coding,
        "latency": link.latency,
        "data_rate": link.data_rate,
    }


def _device_params(device) -> dict:
    return {
        "routing_latency": device.routing_latency,
        "forwarding": device.forwarding,
        "arbitration": device.arbitration,
        "lanes": device.lanes,
        "buffer_bytes": _number(device.buffer_bytes),
    }


def _link(lane_rate: float, lanes: int, coding: str, latency: float):
    link = _sim.Link()
    link.lane_rate, link.lanes, link.coding, link.latency = lane_rate, lanes, coding, latency
    return link


def _framing(
    name: str,
    header: int,
    trailer: int,
    gap: int,
    max_payload: int,
    unit: int = 1,
    min_payload: int = 0,
    bit_error_rate: float = 0.0,
):
    framing = _sim.Framing()
    framing.name, framing.header_bytes, framing.trailer_bytes, framing.gap_bytes = name, header, trailer, gap
    framing.max_payload, framing.payload_unit, framing.min_payload = max_payload, unit, min_payload
    framing.bit_error_rate = bit_error_rate
    return framing


def _device(
    routing_latency: float = 0.0,
    forwarding: str = "cut_through",
    lanes: int = 1,
    buffer_bytes: float = math.inf,
    arbitration: str = "round_robin",
):
    device = _sim.DeviceSpec()
    device.routing_latency, device.forwarding, device.lanes = routing_latency, forwarding, lanes
    device.buffer_bytes, device.arbitration = buffer_bytes, arbitration
    return device


def _node(app_latency: float = 0.0, dma_engines: int = 1, dma_bandwidth: float = math.inf, dma_latency: float = 0.0):
    node = _sim.NodeSpec()
    node.app_latency, node.dma_engines, node.dma_bandwidth, node.dma_latency = (
        app_latency,
        dma_engines,
        dma_bandwidth,
        dma_latency,
    )
    return node


def _spec(
    topology: str,
    nodes: int,
    link,
    framing,
    *,
    hub=None,
    sw=None,
    host=None,
    node=None,
    trunk=None,
    host_costs: dict | None = None,
    **shape,
):
    spec = _sim.FabricSpec()
    spec.topology, spec.nodes = topology, nodes
    for key, value in shape.items():
        setattr(spec, key, value)
    spec.access_link, spec.trunk_link = link, trunk if trunk is not None else link
    spec.framing = framing
    spec.hub, spec.sw, spec.host = hub or _device(), sw or _device(), host or _device()
    spec.node = node or _node()
    costs = _sim.HostCosts()
    for key, value in (host_costs or {}).items():
        setattr(costs, key, value)
    spec.host_costs = costs
    return spec


def _require_nodes(n: int, least: int, what: str) -> None:
    if not isinstance(n, int) or n < least:
        raise UsageError(f"fabric: {what} needs at least {least} nodes, got {n!r}; give n >= {least}")


# --- presets ----------------------------------------------------------------


def dcn_ring(n: int = 16, ports: int = 2) -> Fabric:
    """VCSN paper's direct connection network (DCN): a 1-D ring of FPGAs
    (Intel PAC D5005) joined by SerialLite III links.

    Sources, the VCSN paper (Ueno et al., VCSN, TRETS 2023):

    - link: 4 lanes x 25.78125 Gbaud, 64B/67B coding (eq. 1), 3 m cables
      (section 4.2.2, 15 ns at 0.2 m/ns);
    - framing: 3968-byte payload with 64 + 32 bytes of flow-control header
      and trailer per burst (eq. 1), payload in 64-byte (512-bit) units;
      12.02 GB/s of payload at most;
    - latency: 490.9 ns crossbar to crossbar (Table 1), split as the cable
      plus Ta = (490.9 - 15) / 2 ns at each end (our split; the seed gives
      the sum);
    - node: two mSGDMA read/write pairs (section 3.3) on 19.2 GB/s memory
      (section 4.2.1);
    - host costs: Table 5 and eq. 6 (barrier among n/2 servers), with the
      section 6.3 correction.

    Ours: the credit buffer of 16 bursts (the seed does not give its depth);
    crossbars pass frames through intermediate nodes by cutting through.
    `ports` must be even: ports/2 parallel links to each neighbour.
    """
    _require_nodes(n, 2, "dcn_ring")
    framing = _framing("SerialLite III + credit flow control", 64, 32, 0, 3968, 64, 64)
    link = _link(QSFP28_LANE_RATE, 4, "64b67b", CABLE_3M)
    spec = _spec(
        "ring",
        n,
        link,
        framing,
        ports_per_node=ports,
        hub=_device(buffer_bytes=16 * framing.wire_bytes(3968)),
        node=_node((DCN_LINK_LATENCY - CABLE_3M) / 2, 2, D5005_MEMORY_BANDWIDTH),
        host_costs=VCSN_HOST_COSTS,
    )
    return Fabric("dcn_ring", {"n": n, "ports": ports}, spec)


def _vcsn_spec(topology: str, n: int, ports: int, virtual_ports_per_port: int, switch_ports: int):
    framing = _framing("Ethernet jumbo frame (VCSN)", 8 + 14 + 4, 4, 12, 9152, 64, 64)
    link = _link(QSFP28_LANE_RATE, 4, "64b66b", CABLE_3M)
    # Table 1 counts two cables, one switch and both ends' MAC/encoder paths.
    app_latency = (VCSN_LINK_LATENCY - MSN2100_LATENCY - 2 * CABLE_3M) / 2
    return _spec(
        topology,
        n,
        link,
        framing,
        ports_per_node=ports,
        switch_ports=switch_ports,
        virtual_ports_per_port=virtual_ports_per_port,
        hub=_device(lanes=virtual_ports_per_port),
        sw=_device(MSN2100_LATENCY),
        node=_node(app_latency, 2, D5005_MEMORY_BANDWIDTH),
        host_costs=VCSN_HOST_COSTS,
    )


def vcsn(n: int = 16, ports: int = 2, virtual_ports_per_port: int = 2) -> Fabric:
    """Virtual circuit-switching network over 100 GbE: each FPGA's physical
    port p goes to switch p (dual plane with 2 ports), and carries
    virtual_ports_per_port virtual ports through the MUX/DMUX and MAC table,
    served round robin.

    Sources, the VCSN paper (Ueno et al., VCSN, TRETS 2023):

    - link: 4 lanes x 25.78125 Gbaud, 64B/66B (eq. 2, IEEE 802.3bj), 3 m
      cables;
    - framing: Ethernet jumbo frames of 9152 bytes of payload with 8
      (preamble) + 14 (MAC header) + 4 (VCSN header) + 4 (FCS) + 12 (gap)
      bytes (eq. 2), payload padded to 64-byte units (section 3.4): 12.44
      GB/s at most, 64/106 for the smallest frame;
    - switches: two 16-port Mellanox MSN2100 (section 3.2);
    - latency: 851.1 ns crossbar to crossbar (Table 1) = 2 cables + switch
      + Ta at each end; the switch's 300 ns is Mellanox's figure (ours);
    - node: two mSGDMA pairs on 19.2 GB/s memory; host costs Table 5, eq. 6.

    Ours: switch buffers unbounded (the seed schedules transfers so that
    none congests).
    """
    _require_nodes(n, 2, "vcsn")
    spec = _vcsn_spec("switched", n, ports, virtual_ports_per_port, MSN2100_PORTS)
    return Fabric(
        "vcsn", {"n": n, "ports": ports, "virtual_ports_per_port": virtual_ports_per_port}, spec, virtual_topology=True
    )


def vcsn_fat_tree(n: int = 1024, switch_ports: int = 36, ports: int = 2, virtual_ports_per_port: int = 2) -> Fabric:
    """VCSN on a fat tree of switch_ports-port 100 GbE switches per physical
    port (the VCSN paper section 6.3, Fig. 16: "100 Gbps network switches with 36
    ports"): one switch up to k nodes, leaf-spine up to k^2/2, three levels
    up to k^3/4 (Al-Fares et al., the seed's [3]). Links, framing, node and
    host costs as vcsn(); every switch adds the 300 ns of vcsn() plus a 3 m
    cable. Ours: up-ports chosen by destination (d-mod-k).
    """
    _require_nodes(n, 2, "vcsn_fat_tree")
    spec = _vcsn_spec("fat_tree", n, ports, virtual_ports_per_port, switch_ports)
    return Fabric(
        "vcsn_fat_tree",
        {"n": n, "switch_ports": switch_ports, "ports": ports, "virtual_ports_per_port": virtual_ports_per_port},
        spec,
        virtual_topology=True,
    )


CUSCOMNET_MEASURED_B = 1565e6  # section VI-A, bits/s
CUSCOMNET_TR = 0.57e-6  # section VI-A and Table I
CUSCOMNET_TA = 0.13e-6
CUSCOMNET_QUEUE_PACKETS = 64  # section V: FIFOs of 64 packets


def cuscomnet_torus(
    rows: int = 4,
    cols: int = 4,
    link: str = "measured",
    forwarding: str = "cut_through",
    priorities: int = 1,
    bit_error_rate: float = 0.0,
) -> Fabric:
    """CusComNet (the CusComNet paper, Denholm et al.): FPGAs in a 2-D torus of
    RocketIO GTP links, each node's router a hub routing packets by row,
    then column, along the shortest path (section III-E).

    Sources, the CusComNet paper: packets of at most 64 bytes of payload, FIFOs of 64
    packets per priority level (section V, Table I q), routing latency
    Tr = 0.57 us and user-logic-to-router latency Ta = 0.13 us, cable
    latency Tl = 0 (section VI-A, Table I).

    - link="measured": the measured B = 1565 Mbit/s of payload (section VI-A);
      the header's time is inside B and Tr (a zero-byte packet takes 0.83 us
      between neighbours), so frames carry no extra header bytes.
    - link="nominal": 2 Gbit/s line rate with 8B/10B (1600 Mbit/s, section
      VI-A) and a 16-bit header (Table I: p from 16 to 528 bits).
    - forwarding: "cut_through" fits the seed's measurement (each further hub
      adds Tr); "store_and_forward" is eq. 1 as printed (adds Tr + Tpkt).

    priorities > 1 gives each output that many FIFOs served by strict
    priority (section III-F). bit_error_rate > 0 makes CRC failures resend
    frames (section III-C).
    """
    if link == "measured":
        wire = _link(CUSCOMNET_MEASURED_B, 1, "none", 0.0)
        framing = _framing("CusComNet packet (measured B)", 0, 0, 0, 64, 1, 0, bit_error_rate)
    elif link == "nominal":
        wire = _link(2e9, 1, "8b10b", 0.0)
        framing = _framing("CusComNet packet", 2, 0, 0, 64, 1, 0, bit_error_rate)
    else:
        raise UsageError(f"fabric: cuscomnet_torus link {link!r}; use 'measured' or 'nominal'")
    if not isinstance(priorities, int) or priorities < 1:
        raise UsageError(f"fabric: cuscomnet_torus needs at least 1 priority level, got {priorities!r}")
    hub = _device(
        CUSCOMNET_TR,
        forwarding,
        priorities,
        CUSCOMNET_QUEUE_PACKETS * framing.wire_bytes(64),
        "strict_priority" if priorities > 1 else "round_robin",
    )
    spec = _spec(
        "torus",
        rows * cols if rows > 0 and cols > 0 else 0,
        wire,
        framing,
        rows=rows,
        cols=cols,
        hub=hub,
        node=_node(CUSCOMNET_TA),
    )
    return Fabric(
        "cuscomnet_torus",
        {
            "rows": rows,
            "cols": cols,
            "link": link,
            "forwarding": forwarding,
            "priorities": priorities,
            "bit_error_rate": bit_error_rate,
        },
        spec,
    )


def beff_520n(n: int = 4) -> Fabric:
    """BittWare 520N boards in HPCC FPGA's b_eff ring: each FPGA has 4
    external channels of 256 bits at 156.25 MHz, 2 to each neighbour, with
    520 ns latency (HPCC FPGA's b_eff channel model, docs/METHODS.md). A message is
    striped word by word over the two channels to a neighbour; frames carry
    no header (the channel model has no per-frame cost), so one message of
    L bytes takes ceil(L / 64) cycles plus the latency.
    """
    _require_nodes(n, 3, "beff_520n (distinct left and right neighbours)")
    board = BITTWARE_520N  # the channel model's figures (models/beff.py)
    link = _link(board["width_bytes"] * 8 * board["frequency_hz"], 1, "none", board["latency_s"])
    framing = _framing("520N external channel", 0, 0, 0, 4096, board["width_bytes"])
    spec = _spec("ring", n, link, framing, ports_per_node=2 * board["channels"])
    return Fabric("beff_520n", {"n": n}, spec)


# The FSHMEM paper (FSHMEM, Intel D5005 PACs over QSFP+), sections III-IV.
FSHMEM_DATAPATH = 16 * 250e6  # 128-bit GASNet core at 250 MHz (Table IV)
FSHMEM_DMA_EFFICIENCY = 0.953  # 3813 MB/s of it at best (Table IV, section IV-C)
FSHMEM_PACKET_OVERHEAD = 117  # bytes per packet on the link: fitted, see fshmem_pair
FSHMEM_READ_LATENCY = 0.14e-6  # long - short message latency (Table III)
FSHMEM_SHORT_PUT = 0.21e-6  # Table III
FSHMEM_SHORT_GET = 0.45e-6
FSHMEM_LINK_LATENCY = 0.07e-6  # ours: the split of the 0.21 us


def fshmem_pair(packet_bytes: int = 512) -> Fabric:
    """Two FSHMEM nodes (the FSHMEM paper, GASNet active messages on Intel D5005
    PACs) joined by QSFP+ cables in a ring (section IV-A).

    Sources, the FSHMEM paper:

    - the GASNet core's DMA reads the message body at 3813 MB/s at best:
      95.3 % of its 128-bit, 250 MHz datapath (Table IV, section IV-C);
    - link: QSFP+, 4 lanes x 10.3125 Gbaud with 64B/66B (40 Gbit/s);
    - packets of packet_bytes payload (128..1024 in Fig. 5) with a 16-byte
      header (one 128-bit beat) and an idle gap of 101 byte times: the 117
      bytes per packet are fitted to the 2621 and 3419 MB/s peaks of 128-
      and 256-byte packets (ours; the seed does not give the packet format);
    - latency: a short PUT reaches the target after 0.21 us, a long one
      0.14 us later (DMA read), a short GET returns after 0.45 us (Table
      III); we split 0.21 us as Ta = 0.07 us at each end plus 0.07 us of
      link (ours), and charge the GET handler the rest of 0.45 us.

    PUT is one long message; GET a short request and a long reply (section
    III-A), see one_sided().
    """
    if not isinstance(packet_bytes, int) or packet_bytes < 16 or packet_bytes % 16:
        raise UsageError(
            f"fabric: fshmem_pair packet size {packet_bytes!r}; give a multiple of 16 bytes "
            f"(the 128-bit datapath), e.g. 128, 256, 512 or 1024"
        )
    link = _link(10.3125e9, 4, "64b66b", FSHMEM_LINK_LATENCY)
    header = 16
    framing = _framing("FSHMEM active message", header, 0, FSHMEM_PACKET_OVERHEAD - header, packet_bytes, 16)
    app_latency = (FSHMEM_SHORT_PUT - FSHMEM_LINK_LATENCY) / 2
    spec = _spec(
        "ring",
        2,
        link,
        framing,
        ports_per_node=2,
        node=_node(app_latency, 1, FSHMEM_DATAPATH * FSHMEM_DMA_EFFICIENCY, FSHMEM_READ_LATENCY),
    )
    # A short GET: the whole request (its first byte after 0.21 us, then the
    # header's time on the link), the handler, and the reply's first byte
    # 0.21 us after it leaves.
    header_time = framing.wire_bytes(0) / link.data_rate
    handler = FSHMEM_SHORT_GET - 2 * FSHMEM_SHORT_PUT - header_time
    return Fabric("fshmem_pair", {"packet_bytes": packet_bytes}, spec, handler_latency=handler)


PCIE3_X16_LANE_RATE = 8e9  # 15.75 GB/s with 128b/130b (the VCSN paper section 4.2.1)
PCIE_MEASURED_BANDWIDTH = 10.8e9  # the seed's host-FPGA measurement (Fig. 8)
# Ours (PCIe 3.0 base specification): a memory-write TLP of up to 256 bytes
# of payload (the usual Max_Payload_Size of server root ports) in whole
# dwords, with a 4-byte STP framing token, 2-byte sequence number, 16-byte
# header (64-bit address) and 4-byte LCRC.
PCIE_TLP_PAYLOAD = 256
PCIE_TLP_OVERHEAD = 4 + 2 + 16 + 4
# Ours: InfiniBand's 4 KiB MTU with LRH, BTH, ICRC and VCRC (8 + 12 + 4 + 2).
INFINIBAND_MTU = 4096
INFINIBAND_OVERHEAD = 26


def host_path(n: int = 4, pcie: str = "measured") -> Fabric:
    """The host network of the VCSN paper's comparison (Fig. 7 C, Fig. 8): FPGA to
    its host over PCIe Gen3 x16, hosts (two FPGAs each) on a 100 Gbit/s
    InfiniBand switch, then PCIe to the receiving FPGA. Each segment frames
    its own way: PCIe carries TLPs, the host network InfiniBand packets.

    Sources, the VCSN paper section 4.2.1: PCIe 15.75 GB/s theoretical
    (pcie="theoretical": 16 lanes x 8 GT/s, 128b/130b, under TLP framing)
    and about 10.8 GB/s measured (pcie="measured": a link whose TLPs carry
    10.8 GB/s of payload); InfiniBand 100 Gbit/s (4 x 25.78125 Gbaud,
    64B/66B, section 3.1). Hosts stage every packet in memory before sending
    it on (store and forward). Ours: TLPs of 256 bytes of payload and 26
    bytes of framing, header and CRC (DLLPs for acknowledgements and
    credits left out); InfiniBand packets of 4 KiB (its MTU) with 26 bytes
    of headers and CRCs; no MPI overhead, which the seed blames for most of
    the host path's tenfold time.
    """
    _require_nodes(n, 2, "host_path")
    tlp = _framing("PCIe Gen3 TLP", PCIE_TLP_OVERHEAD, 0, 0, PCIE_TLP_PAYLOAD, 4)
    if pcie == "measured":
        line_rate = PCIE_MEASURED_BANDWIDTH * tlp.wire_bytes(PCIE_TLP_PAYLOAD) / PCIE_TLP_PAYLOAD * 8
        pcie_link = _link(line_rate / 16, 16, "none", 0.0)
    elif pcie == "theoretical":
        pcie_link = _link(PCIE3_X16_LANE_RATE, 16, "128b130b", 0.0)
    else:
        raise UsageError(f"fabric: host_path pcie {pcie!r}; use 'measured' or 'theoretical'")
    network = _link(QSFP28_LANE_RATE, 4, "64b66b", CABLE_3M)
    spec = _spec(
        "host_path",
        n,
        pcie_link,
        tlp,
        trunk=network,
        fpgas_per_host=2,
        host=_device(forwarding="store_and_forward"),
        node=_node(0.0, 2, D5005_MEMORY_BANDWIDTH),
        host_costs=VCSN_HOST_COSTS,
    )
    spec.trunk_framing = _framing("InfiniBand MTU 4096", INFINIBAND_OVERHEAD, 0, 0, INFINIBAND_MTU)
    return Fabric("host_path", {"n": n, "pcie": pcie}, spec)


# Ours: an MPI library moves a long message in segments, and the simulator
# moves a segment as one frame; 64 KiB is Open MPI's and MPICH's usual
# pipelining unit, fine enough for ranks sharing a link to take turns.
CLUSTER_SEGMENT = 64 * 1024


def cluster(
    n: int = 8,
    ranks_per_host: int = 4,
    send_overhead: float = 0.3e-6,
    recv_overhead: float = 0.3e-6,
    gap: float = 0.1e-6,
    intra_latency: float = 0.2e-6,
    intra_bandwidth: float = 10e9,
    host_bandwidth: float = 40e9,
    inter_latency: float = 1.5e-6,
    inter_bandwidth: float = 12.0e9,
    eager_threshold: int = 8192,
    rendezvous_latency: float | None = None,
    mpi_library: str = mpi_rules.OPEN_MPI_41,
) -> Fabric:
    """A commodity cluster of n MPI ranks, ranks_per_host to a host (rank r
    on host r // ranks_per_host), hosts joined by one network switch. Each
    message pays LogGP's host costs (Alexandrov et al., LogGP: Incorporating
    Long Messages into the LogP Model, SPAA 1995) and crosses one of two
    paths (docs/FABRIC.md, "The cluster preset"):

    - send_overhead o_s (s): the sender's software time per message, before
      it enters the path;
    - recv_overhead o_r (s): the receiver's software time per message, after
      its last byte arrived, one message at a time;
    - gap g (s): the least time between two messages' starts from one rank
      (it sends at most one message per max(o_s, g), and takes at most one
      per max(o_r, g));
    - intra_latency (s), intra_bandwidth (B/s): shared memory between two
      ranks of one host: latency, and the rate at which one rank copies
      (the receiver copies: what arrives at one rank at once shares it);
    - host_bandwidth (B/s): the memory bus of a host, shared by all its
      ranks' shared-memory copies;
    - inter_latency (s), inter_bandwidth (B/s): the path between hosts,
      rank to NIC to switch to NIC to rank: its latency, and the NIC's
      rate, shared by the host's ranks in each direction (sending and
      receiving: k senders into one host share its receiving NIC);
    - eager_threshold (B): messages longer than this go by rendezvous, and
      start rendezvous_latency (s) later: the request-to-send and
      clear-to-send round trip, by default 2 (o_s + inter_latency + o_r);
    - the barrier: the dissemination barrier's ceil(log2 n) rounds of empty
      messages, each o_s + (inter_latency, or intra_latency on one host) +
      o_r;
    - mpi_library: whose rules say what an MPI collective call runs
      (simulation/mpi_library.py): "openmpi-4.1" (Open MPI 4.1's default
      selection) or "concurrent" (every rank sends to the root at once). The
      `mpi` gather schedule (MPI_Gatherv) is simulated as that algorithm.

    So a ping-pong's one-way time is o_s + L + size / B + o_r (+ the
    rendezvous past the threshold), with L, B = intra_latency,
    min(intra_bandwidth, host_bandwidth) inside a host and inter_latency,
    inter_bandwidth between hosts.

    The defaults are ours, a typical host of 2024 with a 100 Gbit/s NIC
    (Open MPI over UCX), not measured: `fpgacomm calibrate` fits them to
    the user's machines. Messages move in segments of 64 KiB (CLUSTER_SEGMENT).
    """
    _require_nodes(n, 2, "cluster")
    if not isinstance(ranks_per_host, int) or isinstance(ranks_per_host, bool) or ranks_per_host < 1:
        raise UsageError(f"fabric: cluster ranks_per_host {ranks_per_host!r}; give a whole number of 1 or more")
    if rendezvous_latency is None:
        rendezvous_latency = 2 * (send_overhead + inter_latency + recv_overhead)
    arguments = {
        "n": n,
        "ranks_per_host": ranks_per_host,
        "send_overhead": send_overhead,
        "recv_overhead": recv_overhead,
        "gap": gap,
        "intra_latency": intra_latency,
        "intra_bandwidth": intra_bandwidth,
        "host_bandwidth": host_bandwidth,
        "inter_latency": inter_latency,
        "inter_bandwidth": inter_bandwidth,
        "eager_threshold": eager_threshold,
        "rendezvous_latency": rendezvous_latency,
    }
    _check_parameters("cluster", arguments)
    arguments["mpi_library"] = mpi_rules.check(mpi_library)
    segment = _framing("MPI message segment", 0, 0, 0, CLUSTER_SEGMENT)
    hosts = -(-n // ranks_per_host)
    round_latency = inter_latency if hosts > 1 else intra_latency
    spec = _spec(
        "cluster",
        n,
        _link(intra_bandwidth * 8, 1, "none", intra_latency),
        segment,
        trunk=_link(inter_bandwidth * 8, 1, "none", 0.0),
        fpgas_per_host=ranks_per_host,
        sw=_device(inter_latency),
        host_costs={"barrier_per_round": send_overhead + round_latency + recv_overhead},
    )
    spec.host_link = _link(host_bandwidth * 8, 1, "none", 0.0)
    costs = spec.node
    costs.send_overhead, costs.recv_overhead, costs.gap = send_overhead, recv_overhead, gap
    costs.eager_threshold, costs.rendezvous_latency = eager_threshold, rendezvous_latency
    return Fabric("cluster", arguments, spec)


def _check_parameters(name: str, arguments: dict) -> None:
    """Every number finite and 0 or more, bandwidths above 0: one message
    naming the first that is not."""
    for key, value in arguments.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise UsageError(f"fabric: {name} parameter {key} is {value!r}; give a number")
        if not math.isfinite(value) or value < 0 or (key.endswith("bandwidth") and value == 0):
            least = "above 0" if key.endswith("bandwidth") else "0 or more"
            raise UsageError(f"fabric: {name} parameter {key} is {value!r}; give a finite number {least}")


VCSN_PAPER = (
    "Ueno et al., VCSN: Virtual Circuit-Switching Network for Flexible and Simple-to-Operate "
    "Communication in HPC FPGA Cluster, ACM TRETS 2023"
)
CUSCOMNET_PAPER = (
    "Denholm et al., CusComNet: A Customisable Network for Reconfigurable Heterogeneous " "Clusters, ASAP 2011"
)
HPCC_FPGA = (
    "Meyer et al., Evaluating FPGA Accelerator Performance with a Parameterized OpenCL Adaptation "
    "of Selected Benchmarks of the HPC Challenge Benchmark Suite, H2RC 2020 (HPCC FPGA's b_eff)"
)
FSHMEM_PAPER = (
    "Arthanto et al., FSHMEM: Supporting Partitioned Global Address Space on FPGAs for "
    "Large-Scale Hardware Acceleration Infrastructure"
)
LOGGP = (
    "Alexandrov et al., LogGP: Incorporating Long Messages into the LogP Model, SPAA 1995 (the cost "
    "model); the default values are ours, not measured"
)


@dataclasses.dataclass(frozen=True)
class Preset:
    """One entry of the preset registry: the function that builds the
    fabric, the paper its numbers come from, each argument's unit ("" for a
    count or a name), and the arguments a node count sets."""

    build: object
    reference: str
    units: dict
    node_arguments: tuple = ("n",)
    # The `gather` options (ports, virtual ports) the preset takes, by its argument names.
    gather_options: dict = dataclasses.field(default_factory=dict)


PRESETS = {
    "dcn_ring": Preset(dcn_ring, VCSN_PAPER, {"n": "", "ports": ""}, gather_options={"ports": "ports"}),
    "vcsn": Preset(
        vcsn,
        VCSN_PAPER,
        {"n": "", "ports": "", "virtual_ports_per_port": ""},
        gather_options={"ports": "ports", "virtual_ports": "virtual_ports_per_port"},
    ),
    "vcsn_fat_tree": Preset(
        vcsn_fat_tree,
        VCSN_PAPER,
        {"n": "", "switch_ports": "", "ports": "", "virtual_ports_per_port": ""},
        gather_options={"ports": "ports", "virtual_ports": "virtual_ports_per_port"},
    ),
    "cuscomnet_torus": Preset(
        cuscomnet_torus,
        CUSCOMNET_PAPER,
        {"rows": "", "cols": "", "link": "", "forwarding": "", "priorities": "", "bit_error_rate": "1/bit"},
        node_arguments=("rows", "cols"),
    ),
    "beff_520n": Preset(beff_520n, HPCC_FPGA, {"n": ""}),
    "fshmem_pair": Preset(fshmem_pair, FSHMEM_PAPER, {"packet_bytes": "B"}, node_arguments=()),
    "host_path": Preset(host_path, VCSN_PAPER, {"n": "", "pcie": ""}),
    "cluster": Preset(
        cluster,
        LOGGP,
        {
            "n": "",
            "ranks_per_host": "",
            "send_overhead": "s",
            "recv_overhead": "s",
            "gap": "s",
            "intra_latency": "s",
            "intra_bandwidth": "B/s",
            "host_bandwidth": "B/s",
            "inter_latency": "s",
            "inter_bandwidth": "B/s",
            "eager_threshold": "B",
            "rendezvous_latency": "s",
            "mpi_library": "",
        },
    ),
}


def preset(name: str, nodes: int | None = None, **arguments) -> Fabric:
    """The preset `name`, with `nodes` nodes where it has a node count
    (cuscomnet_torus takes the squarest rows x cols that holds them); the
    one dispatcher of presets (the CLI, gather_sim and platform files call it)."""
    if name not in PRESETS:
        raise UsageError(f"fabric: unknown preset {name!r}; use one of {', '.join(PRESETS)}")
    if nodes is not None:
        if name == "fshmem_pair":
            if nodes != 2:
                raise UsageError("fabric: fshmem_pair is a pair; give --nodes 2 or leave it out")
        elif name == "cuscomnet_torus":
            arguments.setdefault("rows", _torus_rows(nodes))
            arguments.setdefault("cols", nodes // arguments["rows"] if arguments["rows"] else 0)
        else:
            arguments["n"] = nodes
    unknown = sorted(set(arguments) - set(PRESETS[name].units))
    if unknown:
        raise UsageError(
            f"fabric: {name} has no parameter {', '.join(unknown)}; its parameters are "
            f"{', '.join(PRESETS[name].units)}"
        )
    return PRESETS[name].build(**arguments)


def with_arguments(fabric: Fabric, provenance: dict | None = None, **changes) -> Fabric:
    """The fabric built again by its preset with some arguments changed (a
    draw of a platform file, a `--set`), each changed one's provenance
    `provenance` (default {"source": "given"}); the others keep theirs, and
    the draws are kept. A fresh build: MAC table and slowed links are not
    carried over."""
    for key, value in changes.items():
        platform_files.check_value(f"fabric: {fabric.name}", key, value)
    built = preset(fabric.name, **{**fabric.arguments, **changes})
    mark = provenance or {"source": "given"}
    built.provenance = {
        **{k: v for k, v in fabric.provenance.items() if k not in changes},
        **{key: dict(mark) for key in changes},
    }
    built.draws = list(fabric.draws)
    return built


def resized(fabric: Fabric, nodes: int, **gather_options) -> Fabric:
    """The same fabric (its preset and arguments, provenance, draws and
    calibration record) with `nodes` nodes, and the `gather` options (ports,
    virtual_ports) the preset takes; those it has no use for are left out."""
    entry = PRESETS[fabric.name]
    arguments = {key: value for key, value in fabric.arguments.items() if key not in entry.node_arguments}
    for option, argument in entry.gather_options.items():
        if option in gather_options:
            arguments[argument] = gather_options[option]
    built = preset(fabric.name, nodes, **arguments)
    built.provenance, built.draws, built.calibration = dict(fabric.provenance), list(fabric.draws), fabric.calibration
    return built


def is_platform_file(text) -> bool:
    """A string naming a file (or a .json path) rather than a preset."""
    return isinstance(text, str) and text not in PRESETS and (os.path.exists(text) or text.endswith(".json"))


def platform_or_preset(text, nodes: int | None = None) -> Fabric:
    """A Fabric from a preset's name, a platform file's path or a Fabric,
    with `nodes` nodes where given: what `fabric`, `gather --fabric` and
    `predict --fabric` accept."""
    if isinstance(text, Fabric):
        fab = text
    elif text in PRESETS:
        return preset(text, nodes)
    elif is_platform_file(text):
        fab = Fabric.from_json(platform_files.read_text(text, PRESETS), where=f"platform {text}")
    else:
        raise UsageError(
            f"fabric: unknown preset {text!r}, and no platform file of that name; give one of "
            f"{', '.join(PRESETS)}, or the path of a platform file"
        )
    if nodes is None or nodes == fab.nodes:
        return fab
    if not PRESETS[fab.name].node_arguments:
        raise UsageError(f"fabric: {fab.name} has {fab.nodes} nodes, not {nodes}")
    return resized(fab, nodes)


def _torus_rows(nodes: int) -> int:
    if not isinstance(nodes, int) or nodes < 2:
        raise UsageError(f"fabric: a torus needs at least 2 nodes, got {nodes!r}")
    rows = int(math.isqrt(nodes))
    while nodes % rows:
        rows -= 1
    return rows


def _fabric(fabric, nodes: int | None = None) -> Fabric:
    if isinstance(fabric, Fabric):
        if nodes is not None and nodes != fabric.nodes:
            raise UsageError(f"fabric: {fabric.name} has {fabric.nodes} nodes, not {nodes}")
        return fabric
    return platform_or_preset(fabric, nodes)


# --- measurements -------------------------------------------------------------


def _env() -> dict:
    return {
        "simulated": True,
        "fpgacomm_version": _core.__version__,
        "git_revision": _core.git_revision,
        "time_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "command": " ".join(sys.argv),
        "python": platform.python_version(),
    }


def _result(benchmark: str, fabric: Fabric, params: dict, rows: list, units: dict) -> Result:
    return Result(benchmark, {**fabric.params(), **params}, _env(), rows, units)


# How a bad size is named (an empty message is the latency's default).
_MESSAGE_SIZE = "fabric: message size"


def _admit(what: str, fabric: Fabric, messages: int, sizes: list, links: int, limits) -> dict:
    """fabric_resources' estimate of `messages` messages of each size over
    `links` links, checked against the limits before simulating; the
    Result's record of it."""
    from . import resources

    estimate = resources.check(
        resources.estimate_packets(
            f"{what} of up to {max(sizes, default=0)} bytes on {fabric.name}",
            fabric.spec,
            messages,
            sizes,
            hops=max(1, links),
        ),
        limits,
    )
    return _estimated(estimate)


def _estimated(estimate) -> dict:
    """What a Result records of its estimate, beside the events it stepped."""
    return {"events_estimated": estimate.events, "memory_estimated": estimate.memory}


def _admit_network(fabric: Fabric, limits) -> None:
    """The fabric alone, checked before its topology is built (node_at builds it)."""
    from . import resources

    resources.check(
        resources.estimate_network(f"a simulated {fabric.name} of {fabric.nodes} nodes", fabric.spec), limits
    )


def _ranges(values: list) -> str:
    """1, 2, 3, 5 -> "1..3, 5"."""
    parts, start = [], None
    for index, value in enumerate(values):
        if start is None:
            start = value
        if index + 1 == len(values) or values[index + 1] != value + 1:
            parts.append(str(start) if start == value else f"{start}..{value}")
            start = None
    return ", ".join(parts)


def node_at(fabric: Fabric, hops: int | None = None, src: int = 0, port: int = 0) -> int:
    """The lowest-numbered node `hops` links from `src` (leaving by physical
    port `port`); hops=None: the nearest (a neighbour: 1 link on direct
    networks, 2 through a switch). O(n), from the topology's closed form of
    path lengths."""
    return _node_and_links(fabric, hops, src, port)[0]


def _node_and_links(fabric: Fabric, hops: int | None, src: int = 0, port: int = 0) -> tuple:
    """node_at's node and the links to it, with one topology built."""
    node, links = _sim.node_at(fabric.spec, -1 if hops is None else hops, src, port)
    if node >= 0:
        return node, links
    reachable = sorted(set(_sim.distances(fabric.spec, src, port)) - {0})
    raise usage_error(
        f"fabric: no node of {fabric.name} ({fabric.nodes} nodes) is {hops} links from node "
        f"{src}; give --hops as one of {_ranges(reachable)}"
    )


def _sweep(sizes: list, measure, result_of) -> Result:
    """result_of(rows), one row per size from measure(size). An interrupt
    (SIGINT, SIGTERM) leaves with the Result of the sizes simulated so far,
    marked incomplete, as a real sweep does (the command saves it)."""
    rows = []
    try:
        for size in sizes:
            rows.append(measure(size))
    except Interrupted as stop:
        stop.result = result_of(rows)
        stop.result.incomplete = f"{stop}: {len(rows)} of {len(sizes)} sizes simulated"
        raise
    return result_of(rows)


def latency(
    fabric="vcsn", *, nodes: int | None = None, hops: int | None = None, size=0, iterations: int = 1, limits=None
) -> Result:
    """Ping-pong between node 0 and a node `hops` links away (default: a
    neighbour), per size:
    one-way time to the receiver's memory ("latency"), to its first byte at
    the receiver's user logic ("first_byte", what the VCSN paper Table 1 counts),
    and half the round trip over `iterations` as OSU reports."""
    fabric = _fabric(fabric, nodes)
    sizes = byte_sizes(size, _MESSAGE_SIZE)
    _admit_network(fabric, limits)
    dst, links = _node_and_links(fabric, hops)
    estimated = _admit(
        f"a ping-pong of {2 * iterations} messages per size", fabric, 2 * iterations, sizes, links, limits
    )

    def measure(size: int) -> dict:
        r = _sim.ping_pong(fabric.spec, 0, dst, size, iterations)
        return {
            "size": size,
            "hops": r["links"],
            "latency": r["one_way"],
            "first_byte": r["first_byte"],
            "half_round_trip": r["half_round_trip"],
            "events": r["events"],
        }

    return _sweep(
        sizes,
        measure,
        lambda rows: _result(
            "fabric_latency",
            fabric,
            {"src": 0, "dst": dst, "iterations": iterations, **estimated},
            rows,
            {"size": "B", "hops": "", "latency": "s", "first_byte": "s", "half_round_trip": "s", "events": ""},
        ),
    )


def bandwidth(
    fabric="vcsn", *, nodes: int | None = None, size=64 * MiB, hops: int | None = None, port: int = 0, limits=None
) -> Result:
    """One long stream from node 0 to a node `hops` links away (default: a
    neighbour), per size:
    time from the request to the last byte in the receiver's memory."""
    fabric = _fabric(fabric, nodes)
    sizes = byte_sizes(size, _MESSAGE_SIZE)
    _admit_network(fabric, limits)
    dst, links = _node_and_links(fabric, hops, 0, port)
    estimated = _admit("a stream", fabric, 1, sizes, links, limits)

    def measure(size: int) -> dict:
        r = _sim.stream(fabric.spec, 0, dst, size, port)
        return {"size": size, "hops": links, "time": r["time"], "bandwidth": r["bandwidth"], "events": r["events"]}

    return _sweep(
        sizes,
        measure,
        lambda rows: _result(
            "fabric_bw",
            fabric,
            {"src": 0, "dst": dst, "port": port, **estimated},
            rows,
            {"size": "B", "hops": "", "time": "s", "bandwidth": "B/s", "events": ""},
        ),
    )


def one_sided(fabric="fshmem_pair", *, op: str = "put", size=(1 << 21), limits=None) -> Result:
    """FSHMEM PUT or GET from node 0 to node 1, per size: time from the
    command to the last byte in memory, and size / time. limits: as
    latency's."""
    fabric = _fabric(fabric)
    if op not in ("put", "get"):
        raise UsageError(f"fabric: one-sided operation {op!r}; use 'put' or 'get'")
    # A GET's request goes out and its data comes back: two messages.
    sizes = byte_sizes(size, _MESSAGE_SIZE)
    estimated = _admit(f"a one-sided {op}", fabric, 2, sizes, 1, limits)  # the pair's one link

    def measure(size: int) -> dict:
        r = _sim.one_sided(fabric.spec, 0, 1, size, op == "get", fabric.handler_latency)
        return {"size": size, "time": r["time"], "bandwidth": r["bandwidth"], "events": r["events"]}

    return _sweep(
        sizes,
        measure,
        lambda rows: _result(
            f"fabric_{op}",
            fabric,
            {"op": op, **estimated},
            rows,
            {"size": "B", "time": "s", "bandwidth": "B/s", "events": ""},
        ),
    )


def traffic(
    fabric="cuscomnet_torus",
    *,
    rate: float,
    nodes: int | None = None,
    packets: int = 2000,
    size: int | None = None,
    limits=None,
) -> Result:
    """Random uniform traffic: every node sends `packets` packets of `size`
    bytes (default: the framing's largest payload) to uniformly chosen other
    nodes at Poisson times of `rate` packets per second. limits
    (resources.Limits): a run larger is refused before it starts."""
    from . import resources

    # A preset is its spec alone: the topology is built by the simulation,
    # after the estimate (the mean path length from the topology's closed form).
    fabric = _fabric(fabric, nodes)
    payload = fabric.spec.framing.max_payload if size is None else size
    estimated = _estimated(
        resources.check(
            resources.estimate_packets(
                f"random traffic of {packets} packets from each of {fabric.nodes} nodes",
                fabric.spec,
                fabric.nodes * packets,
                [payload],
                hops=resources.mean_links(fabric.spec),
            ),
            limits,
        )
    )
    r = _sim.uniform_traffic(fabric.spec, float(rate), packets, payload)
    row = {
        "rate": float(rate),
        "size": payload,
        "packets": r["packets"],
        "mean_latency": r["mean_latency"],
        "mean_wait": r["mean_wait"],
        "mean_links": r["mean_links"],
        "throughput": r["throughput"],
        "duration": r["duration"],
        "events": r["events"],
    }
    return _result(
        "fabric_traffic",
        fabric,
        {"packets_per_node": packets, **estimated},
        [row],
        {
            "rate": "1/s",
            "size": "B",
            "packets": "",
            "mean_latency": "s",
            "mean_wait": "s",
            "mean_links": "",
            "throughput": "B/s",
            "duration": "s",
            "events": "",
        },
    )


def run_schedule(
    fabric,
    stages: list,
    *,
    reconfigure: bool | None = None,
    reuse: bool = True,
    details: bool = True,
    fast_forward: bool = True,
) -> Result:
    """Runs a staged schedule: each stage a list of transfers (src, dst,
    bytes[, port[, lane]]) or runs of them (count, src, src_step, dst,
    dst_step, bytes, port, lane: the i-th from src + i*src_step to dst +
    i*dst_step, mod the node count), started together; the next stage starts
    after the host's crossbar set-up and barrier (the VCSN paper eq. 7's
    procedure). reconfigure (default: the fabric has a virtual topology,
    VCSN) adds the MAC-table write first. Each stage starts from an empty
    network: reuse simulates each distinct group of independent transfers
    once and gives times bit-identical to reuse=False, which simulates every
    stage in full (docs/FABRIC.md, "Exact reuse"); fast_forward jumps
    through a long stream's steady state by whole periods, also
    bit-identical to stepping (fast_forward=False; docs/FABRIC.md,
    "Fast-forward"). One row per stage; the
    first row, stage "setup", is the control before the first transfer;
    "end" of the last row is the schedule's time. details: samples["N"]
    holds stage N's transfers' completion times after the stage's start, in
    the order given; without them (details=False) a stage that only drains
    the chains of the stage before keeps its groups instead of grouping its
    transfers again, so that a schedule of n nodes costs O(n), not O(n^2)."""
    fabric = _fabric(fabric)
    if reconfigure is None:
        reconfigure = fabric.virtual_topology
    r = _sim.run_schedule(
        fabric.spec,
        [[tuple(t) for t in stage] for stage in stages],
        bool(reconfigure),
        bool(reuse),
        bool(details),
        bool(fast_forward),
    )
    rows = [
        {
            "stage": "setup",
            "start": 0.0,
            "transfer": 0.0,
            "control": r["setup"],
            "end": r["setup"],
            "bytes": 0,
            "transfers": 0,
        }
    ]
    for index, stage in enumerate(r["stages"], 1):
        rows.append(
            {
                "stage": str(index),
                "start": stage["start"],
                "transfer": stage["transfer"],
                "control": stage["control"],
                "end": stage["start"] + stage["transfer"] + stage["control"],
                "bytes": stage["bytes"],
                "transfers": stage["transfers"],
            }
        )
    params = {
        **fabric.params(),
        "stages": len(stages),
        "reconfigure": bool(reconfigure),
        **{
            key: r[key]
            for key in ("events", "events_simulated", "groups", "distinct_groups", "mean_depth", "fast_forwards")
        },
        "reuse": r["reused"],
        "reuse_note": r["note"],
    }
    samples = {str(index): stage["done"] for index, stage in enumerate(r["stages"], 1)} if details else {}
    return Result(
        "fabric_schedule",
        params,
        _env(),
        rows,
        {"stage": "", "start": "s", "transfer": "s", "control": "s", "end": "s", "bytes": "B", "transfers": ""},
        samples=samples,
    )


def virtual_streams(fabric="vcsn", transfers=(), limits=None) -> Result:
    """VCSN's virtual links: every transfer (node, port, vport, bytes)
    leaves by that virtual port at time 0 and goes where the node's MAC
    table points it (Fabric.connect); virtual ports of one physical port
    share it through the MUX in round robin. One row per transfer: the
    virtual port the receiver's DMUX gave it to, the time to its last byte
    in memory, and bytes / time. limits: as latency's."""
    fabric = _fabric(fabric)
    items = []
    for transfer in transfers:
        if not isinstance(transfer, (tuple, list)) or len(transfer) != 4:
            raise UsageError(f"fabric: a virtual transfer is (node, port, vport, bytes), got {transfer!r}")
        items.append((*_virtual_port(tuple(transfer[:3]), "source"), byte_sizes(transfer[3], _MESSAGE_SIZE)[0]))
    _admit_network(fabric, limits)
    estimated = (
        _admit(
            f"{len(items)} virtual streams",
            fabric,
            len(items),
            [max(item[-1] for item in items)],
            _node_and_links(fabric, None)[1],
            limits,
        )
        if items
        else {}
    )
    r = _sim.virtual_streams(fabric.spec, items)
    rows = [
        {"src": src, "port": port, "vport": vport, "size": size, **arrival}
        for (src, port, vport, size), arrival in zip(items, r["arrivals"])
    ]
    return Result(
        "fabric_virtual_streams",
        {**fabric.params(), "events": r["events"], **estimated},
        _env(),
        rows,
        {
            "src": "",
            "port": "",
            "vport": "",
            "size": "B",
            "dst": "",
            "dst_port": "",
            "dst_vport": "",
            "time": "s",
            "bandwidth": "B/s",
        },
    )


def beff_ring(fabric="beff_520n", *, nodes: int | None = None, sizes=None, limits=None) -> Result:
    """HPCC FPGA's b_eff ring with the `sim` communication type: every node
    (FPGA, or rank of a cluster) sends L bytes to both neighbours in rank
    order at once, L = 2^0 .. 2^20, on any topology of 3 nodes or more. Per
    size: the slowest exchange's time, b(L) = L / time per kernel pair, the
    channel model's b(L) for comparison (on beff_520n, whose board it
    describes), and the network's aggregate 2 * n * b(L).
    b_eff is the mean of the aggregate column. limits (resources.Limits): a
    run larger is refused before it starts."""
    from . import resources

    fabric = _fabric(fabric, nodes)
    sizes = [1 << m for m in range(21)] if sizes is None else byte_sizes(sizes, _MESSAGE_SIZE)
    estimated = _estimated(
        resources.check(
            resources.estimate_beff_ring(
                f"a b_eff ring of {fabric.nodes} nodes and messages up to {max(sizes, default=0)} bytes",
                fabric.spec,
                sizes,
            ),
            limits,
        )
    )
    # The channel model describes the 520N board: beside beff_520n only.
    channel = ChannelModel.bittware_520n() if fabric.name == "beff_520n" else None
    events = []

    def measure(size: int) -> dict:
        # One size per call (each on a fresh ring, as beff_ring does per size): an interrupt keeps the sizes done.
        point = _sim.beff_ring(fabric.spec, [size])[0]
        events.append(point["events"])
        row = {"size": point["bytes"], "time": point["time"], "pair_bandwidth": point["pair_bandwidth"]}
        if channel:
            row["model_pair_bandwidth"] = float(channel.bandwidth(point["bytes"]))
        return {**row, "aggregate": 2 * fabric.nodes * point["pair_bandwidth"]}

    units = {"size": "B", "time": "s", "pair_bandwidth": "B/s", "model_pair_bandwidth": "B/s", "aggregate": "B/s"}
    if not channel:
        del units["model_pair_bandwidth"]
    return _sweep(
        sizes,
        measure,
        lambda rows: _result(
            "fabric_beff", fabric, {"communication_type": "sim", **estimated, "events": sum(events)}, rows, units
        ),
    )


# --- fpgacomm suite -------------------------------------------------------------


def _vcsn_two_virtual_links() -> Fabric:
    """vcsn(4) with node 0's two virtual ports of physical port 0 linked
    to nodes 1 and 2: two streams sharing one port."""
    fab = vcsn(4)
    fab.connect((0, 0, 0), (1, 0, 0))
    fab.connect((0, 0, 1), (2, 0, 1))
    return fab


def suite_results() -> list:
    """A small simulated run of every preset, for `fpgacomm suite`."""
    return [
        latency("vcsn", nodes=4),
        bandwidth("vcsn", nodes=4, size=64 * MiB),
        virtual_streams(_vcsn_two_virtual_links(), [(0, 0, 0, 4 * MiB), (0, 0, 1, 4 * MiB)]),
        latency("dcn_ring", nodes=4),
        bandwidth("dcn_ring", nodes=4, size=64 * MiB),
        latency(cuscomnet_torus(4, 4), hops=1, size=[0, 64]),
        latency("vcsn_fat_tree", nodes=1024, hops=6, size=64),
        beff_ring(beff_520n(4), sizes=[1 << m for m in range(0, 21, 4)]),
        one_sided(fshmem_pair(512), op="put", size=[2048, 8192, 1 << 21]),
        one_sided(fshmem_pair(512), op="get", size=[2048, 8192, 1 << 21]),
        bandwidth("host_path", nodes=4, size=64 * MiB, hops=4),
        latency("cluster", nodes=8, hops=4),
    ]
