import Config
import Store
import Testing

@testable import Push

@Suite struct NtfyRequestTests {
  @Test func aMessageIsPostedToTheTopicWithNtfysHeadersAndTheTargetsToken() throws {
    let target = DeliveryTestJobs.target(
      .ntfy, address: "https://ntfy.example.org/aprs-n0call", secret: "tk_abc")
    let request = try NtfyRequest.request(DeliveryTestJobs.forward(target), settings: PushConfig.Forward())
    #expect(request.url == "https://ntfy.example.org/aprs-n0call")
    #expect(request.headers.contains("authorization: Bearer tk_abc"), "\(request.headers)")
    #expect(request.headers.contains { $0.lowercased().hasPrefix("title: ") })
    #expect(String(decoding: request.body, as: UTF8.self).contains("Hello from the trail"))
    #expect(request.refusePrivateAddresses, "a public server never posts to a private address")
  }

  @Test func privateEndpointsAreReachedOnlyWhenTheOperatorAllowsThem() throws {
    let target = DeliveryTestJobs.target(.ntfy, address: "https://127.0.0.1:9443/topic")
    let request = try NtfyRequest.request(
      DeliveryTestJobs.forward(target), settings: PushConfig.Forward(allowPrivateEndpoints: true))
    #expect(!request.refusePrivateAddresses)
  }

  @Test func aTargetThatIsNotHTTPSOrAJobWithoutAMessageIsRefused() {
    let plain = DeliveryTestJobs.target(.ntfy, address: "http://ntfy.example.org/topic")
    #expect(throws: PushError.self) {
      try NtfyRequest.request(DeliveryTestJobs.forward(plain), settings: PushConfig.Forward())
    }
    var empty = DeliveryTestJobs.forward(
      DeliveryTestJobs.target(.ntfy, address: "https://ntfy.example.org/t"))
    empty.entry = nil
    #expect(throws: PushError.self) { try NtfyRequest.request(empty, settings: PushConfig.Forward()) }
  }
}
