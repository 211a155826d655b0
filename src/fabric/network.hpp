// The simulated fabric at frame level. A message waits for a free DMA
// engine of its node, which reads it from on-board memory and cuts it into
// frames; each frame is queued at an output port, arbitrated, serialised onto
// the link, routed at the next device (after its routing latency, from the
// frame's head when cutting through, from its tail when storing and
// forwarding) and finally written to the receiver's memory by one of its
// write engines. A frame takes a place in the next buffer before it is sent,
// so a full buffer holds the sender back (credit-based flow control) instead
// of losing frames; the senders held back get the freed places in round
// robin, a node's own DMA engines taking their turn among the links that
// forward into the same FIFO.
#pragma once
#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <random>
#include <vector>

#include "fabric/engine.hpp"
#include "fabric/mac_table.hpp"
#include "fabric/spec.hpp"
#include "fabric/topology.hpp"

namespace fpgacomm::fabric {

struct MessageRecord {
  int src = 0, dst = 0;
  std::int64_t bytes = 0;
  double start = 0.0;       // when the sender asked for it
  double first_byte = 0.0;  // when its first byte reached the receiver's user logic
  double done = 0.0;        // when its last byte was in the receiver's memory
  int dst_vport = -1;       // the receiver's virtual port the DMUX gave it to (virtual sends only)
};
using Completion = std::function<void(const MessageRecord&)>;

struct PortStats {
  std::uint64_t frames = 0;
  std::uint64_t retransmissions = 0;
  double wire_bytes = 0.0;
  double busy_time = 0.0;
  double wait_sum = 0.0;  // time frames spent queued before their transmission began
};

// Hidden: its hot member functions call each other directly and may be
// inlined, where a position-independent library would otherwise call them
// through the PLT (other code may interpose exported functions).
class [[gnu::visibility("hidden")]] Network : public EventHandler {
 public:
  explicit Network(const FabricSpec& spec);
  ~Network() override;
  Network(const Network&) = delete;
  Network& operator=(const Network&) = delete;

  const FabricSpec& spec() const { return spec_; }
  const Topology& topology() const { return *topology_; }
  const Engine& engine() const { return engine_; }
  double now() const { return engine_.now(); }

  // Sends `bytes` from node src to node dst, starting at time `start`, out
  // of physical port `port` (the plane) through FIFO `lane` of the node's
  // router: a VCSN virtual port or a CusComNet priority level.
  void send(int src, int dst, std::int64_t bytes, double start, int port, int lane, Completion done);
  // Sends `bytes` out of a VCSN virtual port to wherever its node's MAC
  // table points it; the record names the receiving virtual port.
  void send_virtual(const VirtualPort& source, std::int64_t bytes, double start, Completion done);
  // Runs `action` at simulated time `time`.
  void at(double time, std::function<void()> action);
  // Simulates until nothing is left to do. Throws Error if a message never
  // arrived (bounded buffers in a cycle can deadlock).
  void run();
  // Starts an empty network afresh, as after a barrier: the clock at 0,
  // arbitration and write engines as at the beginning. Only when nothing
  // is in flight.
  void begin_stage();
  // Ports of one class are alike in all that times a frame: rate, latency,
  // framing, buffer, lanes, and the kinds of device at both ends.
  int port_class(int port) const { return port_class_[port]; }
  int dma_engines() const { return spec_.node.dma_engines; }

  // Fast-forward through the steady state of long streams (fast_forward.cpp,
  // docs/FABRIC.md "Fast-forward"): once the network's state repeats, shifted
  // by a period, it jumps ahead by whole periods. Completion times, the order
  // of events and their count stay bit-identical to stepping; of the port
  // statistics, busy_time and wait_sum then add the skipped periods' share
  // as multiples of one period's (not summed frame by frame). Off by default;
  // never with bit errors (they draw random numbers) or recorded waits.
  void enable_fast_forward(bool on);
  std::uint64_t fast_forwards() const;  // jumps made so far

  int node_port(int node, int local) const;
  const PortStats& port_stats(int port) const { return ports_[port].stats; }
  // Appends the queue wait of every frame sent by `port` to `sink`.
  void record_waits(int port, std::vector<double>* sink) { ports_[port].wait_sink = sink; }

  void handle(std::uint64_t tag) override;

 private:
  enum Event : std::uint64_t {
    kStart,
    kFrameReady,
    kEnqueue,
    kPortFree,
    kDeliver,
    kDone,
    kWakePort,
    kTimer,
    kReadEngineFree
  };

  struct Frame {
    int message = 0;
    int payload = 0;
    int wire = 0;
    int channel = 0;
    int port = -1;            // the output port whose buffer holds it next
    double eligible = 0.0;    // routed, may be arbitrated from now on
    double tail_ready = 0.0;  // its tail is here: the transmission may not end before
    double first_byte = 0.0;
    double enqueued = 0.0;
    bool requested = false;  // waits for a place in the next buffer
    bool granted = false;    // holds its place in the next buffer already
  };
  // A sender held back by a full FIFO: an upstream port (its head frame
  // `frame`) or a DMA engine (message `message`), with the wire bytes it needs.
  struct Request {
    // The FIFO's input it comes from, numbered for round robin: upstream
    // port p is p, DMA engine e of node n is ports + n * engines + e.
    int input = 0;
    int port = -1, frame = -1, message = -1;
    double wire = 0.0;
  };
  struct Lane {
    std::deque<int> frames;
    double reserved = 0.0;  // wire bytes of frames held or promised
    std::vector<Request> waiting;
    int last_input = -1;       // the input admitted last: round robin goes on after it
    std::uint64_t popped = 0;  // frames that left it (fast-forward counts its pops per period)
    std::int64_t in_runs = 0;  // frames held in runs beyond their one entry each (fast_forward.cpp)
  };
  // Frames a reader queued during a fast-forward, alike but for their
  // times, kept as one entry -(run + 1) in the FIFO until its port takes them.
  struct Run {
    int message = 0, port = 0;
    std::int64_t count = 0;
    double read = 0.0;  // when its first frame was read
  };
  struct Port {
    int device = 0, peer = 0;
    double rate = 0.0, latency = 0.0, capacity = 0.0;
    std::vector<Lane> lanes;
    const Framing* framing = nullptr;  // this segment's frames
    double chunk_wire = 0.0;           // wire bytes of a full chunk on it: most frames are one
    // The devices' specs a frame needs on every hop, looked up once.
    bool round_robin = true;
    double peer_routing_latency = 0.0;
    bool peer_cuts_through = true;
    bool busy = false;
    int rr = 0;
    int in_flight_lane = 0;
    double in_flight_wire = 0.0;
    PortStats stats;
    std::vector<double>* wait_sink = nullptr;
  };
  struct Message {
    MessageRecord record;
    int lane = 0, plane = 0;
    int engine = -1;        // the source's read engine, once one has taken it
    int write_engine = -1;  // the receiver's write engine, from its first frame on
    bool granted = false;   // its next frame holds its place in the output FIFO
    PortGroup group;
    std::vector<std::int64_t> channel_left;  // bytes still to read, per parallel link
    int next_channel = 0;
    std::int64_t frames_total = 0, frames_emitted = 0, frames_done = 0;
    Completion on_done;
    bool live = false;
    std::int64_t read_events = 0;  // its read side's events (fast-forward tells them from the network's)
  };

  static std::uint64_t tag(Event event, std::int64_t id) {
    return (static_cast<std::uint64_t>(event) << 56) | static_cast<std::uint64_t>(id);
  }
  const DeviceSpec& device_spec(int device) const;
  // A device with fewer lanes than the message's lane (a switch without
  // priorities) queues it in its last lane.
  static int lane_at(const Port& port, int lane) { return std::min(lane, static_cast<int>(port.lanes.size()) - 1); }
  double wire_bytes(const Port& port, std::int64_t payload) const {
    return payload == chunk_ ? port.chunk_wire : static_cast<double>(port.framing->chunk_wire_bytes(payload));
  }
  int submit(int src, int dst, std::int64_t bytes, double start, int port, int lane, Completion done);
  double injection(int src, std::int64_t bytes, double start);
  double received(int dst, double arrival);
  void start_reads(int node);
  void frame_ready(int message);
  void try_start(int port);
  bool admit(int port, Lane& lane, const Request& request);
  void grant(int port, Lane& lane);
  void transmit(int port, int lane, int frame);
  void port_free(int port);
  void deliver(int frame);
  int new_frame();
  int new_message();
  // fast_forward.cpp
  struct FastForward;
  void first_hop_sent(int message);
  void restart_checks();
  void checkpoint();
  template <class Visitor>
  void walk_state(Visitor & visitor);
  bool jump(int lag, double period, std::int64_t periods);
  bool read_side(std::uint64_t tag) const;
  void catch_up_reads(int message, double until);
  int take_from_run(Lane & lane);
  void drop_front(Lane & lane, std::int64_t frames, std::vector<int> * freed);
  // Whether the FIFO's frames `first` up to `last` are all `message`'s, full, and their tails here by now.
  bool ready_between(const Lane& lane, std::int64_t first, std::int64_t last, int message) const;

  FabricSpec spec_;
  std::unique_ptr<Topology> topology_;
  Engine engine_;
  std::mt19937_64 rng_;
  std::vector<Port> ports_;
  std::vector<Frame> frames_;
  std::vector<int> free_frames_;
  std::vector<Message> messages_;
  std::vector<int> free_messages_;
  std::int64_t live_messages_ = 0;
  MacTable mac_table_;
  std::int64_t chunk_ = 0;                   // payload bytes of one simulated frame
  std::vector<std::deque<int>> read_queue_;  // per node: messages waiting for a read engine
  std::vector<char> read_busy_;              // node * engines + engine
  std::vector<double> write_free_;           // node * engines + engine: when the write engine is idle
  std::vector<double> send_free_;            // per node: when its software may start the next message
  std::vector<double> receive_free_;         // per node: when its software may take the next arrival
  std::vector<std::function<void()>> timers_;
  std::vector<int> free_timers_;
  std::vector<int> port_class_;
  std::vector<int> live_ids_;  // messages in flight, in order of submission
  std::unique_ptr<FastForward> fast_forward_;
  bool checkpoint_due_ = false;
  std::uint64_t read_ends_ = 0;  // reads finished (a checkpoint's period must hold none)
  std::vector<Run> runs_;
  std::vector<int> free_runs_;
};

}  // namespace fpgacomm::fabric
