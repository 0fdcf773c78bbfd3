import Config
import Store
import Testing

@testable import Push

@Suite struct WebhookRequestTests {
  @Test func theBodyIsSignedWithTheTargetsSecretAtTheTimeItGoes() throws {
    let target = DeliveryTestJobs.target(
      .webhook, address: "https://hooks.example.org/aprs", secret: "s3cret")
    let now: Int64 = 1_796_198_150_000
    let request = try WebhookRequest.request(
      DeliveryTestJobs.forward(target), settings: PushConfig.Forward(), now: now)
    #expect(request.url == "https://hooks.example.org/aprs")
    let expected = ForwardPayload.signature(secret: "s3cret", seconds: now / 1000, body: request.body)
    #expect(request.headers.contains("\(ForwardPayload.signatureHeader): \(expected)"), "\(request.headers)")
    #expect(request.headers.contains("content-type: application/json"))
    #expect(
      request.body
        == ForwardPayload.webhookBody(station: "N0CALL-9", message: DeliveryTestJobs.message))
    #expect(request.refusePrivateAddresses)
  }

  @Test func aTargetThatIsNotHTTPSIsRefused() {
    let target = DeliveryTestJobs.target(.webhook, address: "ftp://hooks.example.org/aprs")
    #expect(throws: PushError.self) {
      try WebhookRequest.request(DeliveryTestJobs.forward(target), settings: PushConfig.Forward(), now: 0)
    }
  }
}
