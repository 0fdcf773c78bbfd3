import Store
import Testing

@testable import Push

@Suite struct DeliveryQueueTests {
  private func job(_ id: Int, _ token: String) -> DeliveryJob {
    DeliveryJob(id: id, purpose: .batch(1), recipient: .device(DeliveryTestJobs.device(token)))
  }

  @Test func jobsLeaveInOrderAndHeldOnesGoBackAheadOfTheRest() {
    var queue = DeliveryQueue()
    for id in 1...4 { queue.append(job(id, "t\(id)")) }
    let first = queue.popFirst()
    let second = queue.popFirst()
    #expect(first?.id == 1 && second?.id == 2)
    queue.putBack([first!, second!])
    #expect(queue.waiting == 4)
    #expect((0..<4).compactMap { _ in queue.popFirst()?.id } == [1, 2, 3, 4])
    #expect(queue.popFirst() == nil)
  }

  @Test func removingARecipientsJobsKeepsTheOthersInOrder() {
    var queue = DeliveryQueue()
    queue.append(job(1, "a"))
    queue.append(job(2, "b"))
    queue.append(job(3, "a"))
    queue.append(job(4, "c"))
    let removed = queue.remove { $0.recipient.key == .device(token: "a") }
    #expect(removed.map(\.id) == [1, 3])
    #expect((0..<2).compactMap { _ in queue.popFirst()?.id } == [2, 4])
  }

  @Test func stoppingEndsEveryWaitingJobWithTheReason() {
    var queue = DeliveryQueue()
    queue.append(job(1, "a"))
    queue.append(job(2, "b"))
    let ended = queue.stopWaiting(reason: "bad key")
    #expect(ended.map(\.job.id) == [1, 2])
    #expect(ended.allSatisfy { $0.decision == .stopProvider(reason: "bad key") })
    #expect(queue.count == 0)
  }
}

@Suite struct ChannelKindTests {
  @Test func everyPlatformAndForwardKindHasOneChannelAndBack() {
    for platform in DevicePlatform.allCases { #expect(ChannelKind(platform).platform == platform) }
    for kind in ForwardKind.allCases { #expect(ChannelKind(kind).forwardKind == kind) }
    let served = ChannelKind.allCases.filter { ($0.platform == nil) != ($0.forwardKind == nil) }
    #expect(served.count == ChannelKind.allCases.count, "each channel serves devices or targets, not both")
  }

  @Test func aRecipientKnowsItsChannelItsKeyAndItsStation() {
    let device = DeliveryTestJobs.device("tok", platform: .ios)
    let target = DeliveryTestJobs.target(.webhook, address: "https://h.example.org/x")
    #expect(DeliveryRecipient.device(device).channel == .apns)
    #expect(DeliveryRecipient.device(device).key == .device(token: "tok"))
    #expect(DeliveryRecipient.target(target).channel == .webhook)
    #expect(DeliveryRecipient.target(target).key == .forward(key: target.deliveryKey))
    #expect(DeliveryRecipient.target(target).station == "N0CALL-9")
  }
}
