import Config
import Store
import Testing

@testable import Push

@Suite struct EmailRequestTests {
  static let settings = PushConfig.Forward(
    email: .init(url: "smtps://mail.example.org", from: "aprs@example.org", username: "u", password: "p"))

  @Test func aMessageGoesAsAMailToTheTargetThroughTheOperatorsServer() throws {
    let target = DeliveryTestJobs.target(.email, address: "me@example.org")
    let mail = try EmailRequest.mail(DeliveryTestJobs.forward(target), settings: Self.settings, now: 0)
    #expect(
      mail.url == "smtps://mail.example.org" && mail.from == "aprs@example.org" && mail.to == "me@example.org"
    )
    #expect(mail.username == "u" && mail.password == "p")
    let text = String(decoding: mail.message, as: UTF8.self)
    #expect(text.contains("Subject: APRS from KJ7ABC-7") && text.contains("Hello from the trail"), "\(text)")
  }

  @Test func aConfirmationMailCarriesItsCodeAndNoMessage() throws {
    let target = DeliveryTestJobs.target(.email, address: "me@example.org")
    let job = DeliveryJob(id: 1, purpose: .confirmation(code: "493817"), recipient: .target(target))
    let text = String(
      decoding: try EmailRequest.mail(job, settings: Self.settings, now: 0).message, as: UTF8.self)
    #expect(text.contains("493817") && !text.contains("Hello from the trail"))
  }

  @Test func withoutAnSMTPServerOrAMessageNothingGoes() {
    let target = DeliveryTestJobs.target(.email, address: "me@example.org")
    #expect(throws: PushError.self) {
      try EmailRequest.mail(DeliveryTestJobs.forward(target), settings: PushConfig.Forward(), now: 0)
    }
    var empty = DeliveryTestJobs.forward(target)
    empty.entry = nil
    #expect(throws: PushError.self) { try EmailRequest.mail(empty, settings: Self.settings, now: 0) }
  }
}
