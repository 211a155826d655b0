"""CusComNet's latency and queueing model (the CusComNet paper, section IV, eq. 1-7).

A packet of p bytes crosses k - 1 links (the paper's k = 2 is a neighbour
pair: its empty packet takes Tr + 2 Ta = 0.83 us, as measured) of bandwidth
B, each hub adding its routing latency Tr and the link latency Tl::

    T_pkt = p / B                                             (eq. 1's term)
    T     = (k - 1) (Tl + Tr + T_pkt) + 2 Ta                  (eq. 1)

with packets generated at lambda per second per node, spread over 4 links,
each output queue an M/M/1 queue::

    EQ = lambda / 4,  DQ = 1 / T_pkt = B / p                  (eq. 2, 3)
    rho = EQ / DQ,  q = rho^2 / (1 - rho)                     (eq. 4)
    T_q = rho / (DQ - EQ)                                     (eq. 5)
    T_p = T_s + T_q + T_pkt                                   (eq. 6)
    T~  = (k~ - 1) (Tl + Tr + T_p) + 2 Ta                     (eq. 7)

The paper's figures: B = 1565 Mbit/s, Tl = 0, Tr = 0.57 us, Ta = 0.13 us;
k = 2 and a 64-byte packet give 1.157 us. Fig. 7 projects eq. 1 along the
longest path of 2-D tori up to 1024 nodes.
"""

from __future__ import annotations

import math

import numpy as np

from ..results.result import Result
from .base import Fit, Model, figures, usage_error
from .least_squares import Solution

CUSCOMNET_PAPER = dict(
    link_latency=0.0, routing_latency=0.57e-6, app_latency=0.13e-6, link_bandwidth=1565e6 / 8, packet_bytes=64
)
LINKS_PER_NODE = 4  # a 2-D torus: eq. 2 spreads a node's packets over 4 outgoing links
CLOCK_HZ = 100e6  # the prototype's clock (section VI-A), for Fig. 7's cycles
FIGURE_7_NODES = (4, 16, 64, 256, 1024)


class CusComNet(Model):
    """Eq. 1's time of a packet against the links it crosses (hops = k - 1)."""

    name = "cuscomnet"
    parameters = ("link_latency", "routing_latency", "app_latency", "link_bandwidth", "packet_bytes")
    positive = ("link_bandwidth", "packet_bytes")
    non_negative = ("link_latency", "routing_latency", "app_latency")
    units = {
        "link_latency": "s",
        "routing_latency": "s",
        "app_latency": "s",
        "link_bandwidth": "B/s",
        "packet_bytes": "B",
    }
    x_column = "hops"
    y_column = "latency"

    @classmethod
    def from_paper(cls, **overrides) -> CusComNet:
        return cls(**{**CUSCOMNET_PAPER, **overrides})

    @property
    def packet_time(self) -> float:
        """T_pkt = p / B."""
        return self.packet_bytes / self.link_bandwidth

    def time(self, links, hub_time=None):
        """Eq. 1 for a path of k = `links` (eq. 7 when hub_time is T_p)."""
        per_hub = self.packet_time if hub_time is None else hub_time
        k = np.asarray(links, dtype=float)
        return (k - 1) * (self.link_latency + self.routing_latency + per_hub) + 2 * self.app_latency

    def predict(self, x):
        """Eq. 1 against hops, the links crossed (k - 1)."""
        return self.time(np.asarray(x, dtype=float) + 1)

    def queue(self, rate: float, ports: int = LINKS_PER_NODE, scheduling: float = 0.0) -> dict:
        """Eq. 2-6 for `rate` packets per second per node."""
        enqueue = rate / ports
        dequeue = 1.0 / self.packet_time
        rho = enqueue / dequeue
        if not 0 <= rho < 1:
            raise usage_error(
                f"cuscomnet: the output queue is unstable (rho = {rho:.3g} >= 1): {rate:.4g} "
                f"packets/s over {ports} links exceed what {self.packet_bytes:.0f}-byte packets at "
                f"{self.link_bandwidth:.4g} B/s can drain; lower the rate below "
                f"{ports * dequeue:.4g} packets/s"
            )
        wait = rho / (dequeue - enqueue)
        return {
            "enqueue": enqueue,
            "dequeue": dequeue,
            "rho": rho,
            "queued": rho**2 / (1 - rho),
            "wait": wait,
            "hub_time": scheduling + wait + self.packet_time,
        }

    def average_time(
        self, mean_links: float, rate: float, ports: int = LINKS_PER_NODE, scheduling: float = 0.0
    ) -> float:
        """Eq. 7: eq. 1 over k~ links with T_p of eq. 6 at every hub."""
        return float(self.time(mean_links, self.queue(rate, ports, scheduling)["hub_time"]))

    def torus_projection(self, nodes=FIGURE_7_NODES, clock_hz: float = CLOCK_HZ) -> Result:
        """Fig. 7: eq. 1 along the longest path of a 2-D torus of each size,
        for an empty packet and for this model's packet, in s and cycles."""
        empty = CusComNet(**{**self.params, "packet_bytes": 0})
        rows = []
        for n in nodes:
            r, c = torus_shape(n)
            links = r // 2 + c // 2 + 1
            latency, packet = float(empty.time(links)), float(self.time(links))
            rows.append(
                {
                    "nodes": n,
                    "rows": r,
                    "cols": c,
                    "links": links,
                    "latency": latency,
                    "packet_time": packet,
                    "latency_cycles": latency * clock_hz,
                    "packet_cycles": packet * clock_hz,
                }
            )
        return Result(
            "cuscomnet_torus_projection",
            {**self.params, "clock_hz": clock_hz},
            {},
            rows,
            {
                "nodes": "",
                "rows": "",
                "cols": "",
                "links": "",
                "latency": "s",
                "packet_time": "s",
                "latency_cycles": "",
                "packet_cycles": "",
            },
        )

    @classmethod
    def data(cls, result: Result) -> tuple:
        """(hops, latency) of one packet size: a fabric latency Result, or
        several joined (fpgacomm fit A.json B.json ...)."""
        x, y = super().data(result)
        if len(set(x.tolist())) < 2:
            raise usage_error(
                f"{cls.name} model: needs latencies over at least two hop counts to separate Tr "
                f"from Ta; got hops {sorted(set(x.tolist()))} (join fabric latency Results: "
                f"fpgacomm fit H1.json H2.json ... --model cuscomnet)"
            )
        if "size" in result.columns and len(set(result.column("size").tolist())) > 1:
            raise usage_error(
                f"{cls.name} model fits the latency of one packet size against hops; "
                f"{result.benchmark} holds sizes {sorted(set(result.column('size').tolist()))}"
            )
        return x, y

    @classmethod
    def fit(
        cls,
        result,
        *,
        link_latency: float = CUSCOMNET_PAPER["link_latency"],
        link_bandwidth: float = CUSCOMNET_PAPER["link_bandwidth"],
        packet_bytes: float | None = None,
        weighted: bool = False,
    ) -> Fit:
        """Tr and Ta from latencies over at least two hop counts, as the paper
        measured them (each hop adds Tr; a neighbour pair costs Tr + 2 Ta
        plus the packet's time). Tl (not separable from Tr) and B (the paper
        measures it from streams) are held fixed; the packet size is the
        Result's (its 'size' column) unless given."""
        if packet_bytes is None:
            packet_bytes = (
                float(result.column("size")[0])
                if isinstance(result, Result) and "size" in result.columns
                else CUSCOMNET_PAPER["packet_bytes"]
            )
        return super().fit(
            result,
            weighted=weighted,
            fixed={"link_latency": link_latency, "link_bandwidth": link_bandwidth, "packet_bytes": packet_bytes},
        )

    @classmethod
    def _solve(cls, x, y, sigma, fixed=None, **options) -> Solution:
        """Eq. 1 is linear in (Tr, Ta) once Tl, B and p are known: bounded
        least squares, both at or above 0."""
        known = x * (fixed["link_latency"] + fixed["packet_bytes"] / fixed["link_bandwidth"])
        return cls._linear(
            np.column_stack([x, 2 * np.ones_like(x)]), y - known, sigma, ("routing_latency", "app_latency")
        )


def torus_shape(nodes: int) -> tuple:
    """The most nearly square rows x cols = nodes."""
    if nodes < 1:
        raise usage_error(f"a torus needs at least 1 node, got {nodes}")
    rows = max(r for r in range(1, math.isqrt(nodes) + 1) if nodes % r == 0)
    return rows, nodes // rows


# ------------------------------------------------- command-line registration

OPTIONS = {
    "links": (int, 2, "k, links along the path as the CusComNet paper counts them (2: neighbours)"),
    "packet_bits": (int, 512, "p, packet size in bits"),
    "link_bandwidth": (float, 1565e6, "B, link bandwidth in bit/s (the CusComNet paper measured 1565 Mbit/s)"),
    "routing_latency": (float, CUSCOMNET_PAPER["routing_latency"], "Tr in s"),
    "app_latency": (float, CUSCOMNET_PAPER["app_latency"], "Ta in s"),
    "link_latency": (float, CUSCOMNET_PAPER["link_latency"], "Tl in s"),
    "rate": (float, 0.0, "lambda, packets per second per node, for eq. 2-7 (0: no queueing figures)"),
    "mean_links": (float, None, "k~, average links per path for eq. 7 (default: --links)"),
    "max_nodes": (int, 1024, "largest torus of the Fig. 7 projection (square tori 4, 16, 64, ...)"),
}


def predictions(
    links=2,
    packet_bits=512,
    link_bandwidth=1565e6,
    routing_latency=CUSCOMNET_PAPER["routing_latency"],
    app_latency=CUSCOMNET_PAPER["app_latency"],
    link_latency=CUSCOMNET_PAPER["link_latency"],
    rate=0.0,
    mean_links=None,
    max_nodes=1024,
) -> Result:
    if links < 1 or packet_bits < 0 or link_bandwidth <= 0 or rate < 0:
        raise usage_error(
            f"cuscomnet needs --links >= 1, --packet-bits >= 0, --link-bandwidth > 0 and "
            f"--rate >= 0; got {links}, {packet_bits}, {link_bandwidth}, {rate}"
        )
    model = CusComNet.checked(
        link_latency=link_latency,
        routing_latency=routing_latency,
        app_latency=app_latency,
        link_bandwidth=link_bandwidth / 8,
        packet_bytes=packet_bits / 8,
    )
    rows = [("T_pkt = p / B", model.packet_time, "s"), (f"T, eq. 1 (k = {links})", float(model.time(links)), "s")]
    if rate > 0:
        q = model.queue(rate)
        k = links if mean_links is None else mean_links
        rows += [
            ("EQ_pkt, eq. 2", q["enqueue"], "1/s"),
            ("DQ_pkt, eq. 3", q["dequeue"], "1/s"),
            ("rho", q["rho"], ""),
            ("queued packets, eq. 4", q["queued"], ""),
            ("T_q, eq. 5", q["wait"], "s"),
            ("T_p, eq. 6", q["hub_time"], "s"),
            (f"T~, eq. 7 (k~ = {k:g})", model.average_time(k, rate), "s"),
        ]
    nodes = [4**e for e in range(1, 11) if 4**e <= max_nodes]
    for row in model.torus_projection(nodes).rows:
        where = f"{row['nodes']} nodes ({row['rows']}x{row['cols']} torus, k = {row['links']})"
        rows += [
            (f"longest path, empty packet, {where}", row["latency"], "s"),
            (f"longest path, {packet_bits}-bit packet, {where}", row["packet_time"], "s"),
        ]
    return figures("model_cuscomnet", {**model.params, "links": links, "rate": rate}, rows)


def fit(result: Result) -> Fit:
    return CusComNet.fit(result)
