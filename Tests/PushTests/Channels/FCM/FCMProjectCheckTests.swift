import Testing

@testable import Push

/// `SENDER_ID_MISMATCH` deletes a token only once the service account's project is proven.
@Suite struct FCMProjectCheckTests {
  @Test func beforeAnyAcceptedPushMismatchesKeepTheirTokensUntilThreeDevicesStopTheProvider() {
    var check = FCMProjectCheck()
    #expect(check.senderMismatch(token: "a") == .keepToken)
    #expect(check.senderMismatch(token: "a") == .keepToken)  // one device twice is still one device
    #expect(check.senderMismatch(token: "b") == .keepToken)
    #expect(check.senderMismatch(token: "c") == .stopProvider(tokens: 3))
  }

  @Test func afterAnAcceptedPushAMismatchDeletesItsToken() {
    var check = FCMProjectCheck()
    #expect(check.senderMismatch(token: "a") == .keepToken)
    check.accepted()
    #expect(check.proven)
    for token in ["a", "b", "c", "d"] { #expect(check.senderMismatch(token: token) == .deleteToken) }
  }

  @Test func onlyAnFCMErrorCodeOfSENDER_ID_MISMATCHCounts() {
    let mismatch = Array(
      #"{"error":{"code":403,"status":"PERMISSION_DENIED","message":"SenderId mismatch","details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"SENDER_ID_MISMATCH"}]}}"#
        .utf8)
    #expect(RetryPolicy.isSenderIDMismatch(ProviderResponse(status: 403, body: mismatch)))
    let denied = Array(
      #"{"error":{"code":403,"status":"PERMISSION_DENIED","message":"SENDER_ID_MISMATCH"}}"#.utf8)
    #expect(!RetryPolicy.isSenderIDMismatch(ProviderResponse(status: 403, body: denied)))
    #expect(!RetryPolicy.isSenderIDMismatch(ProviderResponse(status: 403, body: Array("<html>".utf8))))
  }
}
