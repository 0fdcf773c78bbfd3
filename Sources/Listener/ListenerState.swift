import APRS
import Synchronization

/// The listener's counters since it started, updated by every thread without locks.
final class ListenerCounters: Sendable {
  /// Every line read from APRS-IS (comments, packets, too long ones).
  let linesRead = Atomic<Int>(0)
  /// `#` lines among them.
  let comments = Atomic<Int>(0)
  /// Packet lines dropped because the writer's queue was full.
  let drops = Atomic<Int>(0)
  /// Lines over 512 bytes, skipped.
  let tooLong = Atomic<Int>(0)
  /// Lines that are not TNC2 packets (includes none of ``tooLong``).
  let invalid = Atomic<Int>(0)
  /// Messages stored.
  let messagesStored = Atomic<Int>(0)
  /// Copies of stored messages (not stored again).
  let duplicates = Atomic<Int>(0)
  /// Delivery receipts (acks, rejs) recorded.
  let receipts = Atomic<Int>(0)
  /// ACK lines written to the socket.
  let acksSent = Atomic<Int>(0)
  /// ACKs the 30 s rule held back.
  let acksSuppressed = Atomic<Int>(0)
  /// ACKs dropped: no verified login yet (or an unverified one), the outgoing buffer full, or the stop.
  let acksDropped = Atomic<Int>(0)
  /// Lines that led to nothing, other than invalid ones: not messages, not for us, bulletins, … .
  let skipped = Atomic<Int>(0)
  /// Among ``skipped``: messages, acks and rejs for addressees that are not registered (the filter's prefixes
  /// let them through, or APRS-IS's own delivery rules), dropped by the exact match.
  let notForUs = Atomic<Int>(0)
  /// Messages for served stations that were not registered any more at commit time.
  let unknownStation = Atomic<Int>(0)
  /// Messages dropped because their addressee blocks the sender (station settings).
  let blocked = Atomic<Int>(0)
  /// Messages dropped because the operator banned their sender.
  let banned = Atomic<Int>(0)
  /// Messages to `fallback` stations their own radio answered within the wait (no ACK from the server).
  let airAnswered = Atomic<Int>(0)
  /// ACKs sent for `fallback` stations at the end of the wait.
  let fallbackAcks = Atomic<Int>(0)
  /// Subscription entries stored, by kind.
  let subscriptionEntries = Mutex<[SubscriptionKind: Int]>([:])
  /// Batches whose transaction failed.
  let storeErrors = Atomic<Int>(0)
  /// Epoch ms of the last line read (0: none yet).
  let lastLineAt = Atomic<Int64>(0)

  init() {}

  func add(_ counter: borrowing Atomic<Int>, _ value: Int) {
    if value != 0 { counter.wrappingAdd(value, ordering: .relaxed) }
  }
}

/// What the threads share besides the counters: the connection's status, the served stations, and a "publish
/// now" request for the housekeeper.
final class SharedState: Sendable {
  private let state = Mutex(Snapshot())
  /// The live registered stations: changed by the registration watcher, asked by the writer.
  let stations = StationRegistry()
  /// Copies of sent messages wait for the transmit budget (set by the sender, published by the housekeeper).
  let sendBudgetFull = Atomic<Bool>(false)

  struct Snapshot {
    var status = ConnectionStatus()
    var statusVersion = 0
  }

  var status: ConnectionStatus { state.withLock { $0.status } }
  /// Grows with every status change (the housekeeper publishes when it moved).
  var statusVersion: Int { state.withLock { $0.statusVersion } }

  func setStatus(_ status: ConnectionStatus) {
    state.withLock {
      $0.status = status
      $0.statusVersion += 1
    }
  }
}
