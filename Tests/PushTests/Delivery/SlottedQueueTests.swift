import Store
import Testing

@testable import Push

@Suite struct SlottedQueueTests {
  private func request(_ station: String, _ token: String) -> SlotRequest {
    SlotRequest(
      lane: .push, station: DeliveryStation(station), recipient: SlotRecipient(token),
      group: EndpointGroup(url: token))
  }

  private func job(_ id: Int, _ token: String) -> DeliveryJob {
    DeliveryJob(
      id: id, purpose: .batch(1), recipient: .device(DeliveryTestJobs.device(token, platform: .webpush)))
  }

  @Test func aJobThatNeverWentOutGivesItsSlotBackAndTeachesNothing() {
    let pool = SlotPool()
    var queue = SlottedQueue(pool: pool)
    let token = "https://up.example.org/a"
    queue.append(job(1, token), as: request("N0CALL-7", token))
    let taken = queue.next(now: 1_000)
    #expect(taken?.job.id == 1 && taken?.ticket.timeoutMs == 3_000, "an endpoint never heard gets 3 s")
    #expect(pool.slots.inFlight(.push) == 1)
    queue.unsent(taken!.ticket, now: 1_100)
    #expect(pool.slots.inFlight(.push) == 0)
    #expect(!pool.slots.isPrivileged(request("N0CALL-7", token), now: 1_200))
  }

  @Test func aFastAnswerGivesTheSlotBackAndTheEndpointsNetworkTheNormalLimit() throws {
    let pool = SlotPool()
    var queue = SlottedQueue(pool: pool)
    let token = "https://up.example.org/a"
    queue.append(job(1, token), as: request("N0CALL-7", token))
    let takenNext = queue.next(now: 1_000)
    let taken = try #require(takenNext)
    // A transfer curl refuses to start ends the job with a retry; its slot is not kept.
    let refused = queue.start(taken.job, taken.ticket, tag: 7, now: 1_000) { () throws(PushError) in
      throw PushError("no")
    }
    #expect(refused?.decision == .retry(at: 1_000 + RetryPolicy.minimumBackoffMs, reason: "no"))
    #expect(pool.slots.inFlight(.push) == 0 && queue.count == 0)
    queue.append(job(2, token), as: request("N0CALL-7", token))
    let secondNext = queue.next(now: 2_000)
    let second = try #require(secondNext)
    #expect(queue.start(second.job, second.ticket, tag: 8, now: 2_000) { () throws(PushError) in } == nil)
    #expect(queue.answered(tag: 9, response: ProviderResponse(status: 201), now: 2_100) == nil, "not its tag")
    #expect(queue.answered(tag: 8, response: ProviderResponse(status: 201), now: 2_100)?.id == 2)
    #expect(pool.slots.inFlight(.push) == 0)
    queue.append(job(3, "https://up.example.org/b"), as: request("KJ7ABC", "https://up.example.org/b"))
    #expect(queue.next(now: 3_000)?.ticket.timeoutMs == 30_000, "the domain answered within 1 s")
  }

  @Test func noAnswerDemotesTheEndpointAndStoppingEndsWhatWaits() throws {
    let pool = SlotPool()
    var queue = SlottedQueue(pool: pool)
    let token = "https://up.example.org/a"
    queue.append(job(1, token), as: request("N0CALL-7", token))
    let takenNext = queue.next(now: 1_000)
    let taken = try #require(takenNext)
    _ = queue.start(taken.job, taken.ticket, tag: 1, now: 1_000) { () throws(PushError) in }
    _ = queue.answered(tag: 1, response: ProviderResponse(status: 0, transportError: "timed out"), now: 4_000)
    #expect(!pool.slots.isPrivileged(request("N0CALL-7", token), now: 4_100))
    queue.append(job(2, token), as: request("N0CALL-7", token))
    queue.append(job(3, token), as: request("N0CALL-7", token))
    let ended = queue.stopWaiting(reason: "stopped")
    #expect(ended.map(\.job.id) == [2, 3] && queue.count == 0)
  }
}

@Suite struct KnownPushServicesTests {
  @Test func theBrowsersOwnPushServicesAreKnownAndLookalikesAreNot() {
    for host in [
      "fcm.googleapis.com", "updates.push.services.mozilla.com", "web.push.apple.com",
      "wns2-by3p.notify.windows.com", "FCM.googleapis.com",
    ] {
      #expect(KnownPushServices.contains(host), "\(host)")
    }
    for host in [
      "fcm.googleapis.com.example.org", "notify.windows.com.evil.example", "ntfy.sh", "evilapple.com",
    ] {
      #expect(!KnownPushServices.contains(host), "\(host)")
    }
  }
}
