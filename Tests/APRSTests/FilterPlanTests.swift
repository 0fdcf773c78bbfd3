import Testing

@testable import APRS

@Suite struct FilterPlanTests {
  /// `count` (< 6760) distinct stations with typical 6-character calls, SSIDs 0-15 when `ssids`.
  static func stations(_ count: Int, ssids: Bool = true) -> [StationAddress] {
    (0..<count).map { index in
      let letters = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
      let call =
        "KJ\(index % 10)\(letters[(index / 10) % 26])\(letters[(index / 260) % 26])\(letters[index % 26])"
      return try! StationAddress(base: call, ssid: ssids ? index % 16 : 0)
    }
  }

  @Test("one station: a live g/ filter")
  func one() throws {
    let plan = FilterPlan(stations: [try StationAddress(parsing: "n0call-7")])
    #expect(plan.spec == "g/N0CALL-7")
    #expect(plan.mode == .live)
    #expect(plan.liveLine.map { String(decoding: $0, as: UTF8.self) } == "#filter g/N0CALL-7\r\n")
    #expect(
      String(
        decoding: plan.loginLine(
          user: "T2CLOUD", passcode: 1, softwareName: "aprs-cloud", softwareVersion: "1"),
        as: UTF8.self) == "user T2CLOUD pass 1 vers aprs-cloud 1 filter g/N0CALL-7\r\n")
  }

  @Test("entries are upper case, deduplicated and sorted, whatever the input order")
  func stable() throws {
    let calls = ["w1aw", "N0CALL-7", "N0CALL", "w1aw-0", "KJ7ABC-15", "N0CALL-7"]
    let stations = try calls.map { try StationAddress(parsing: $0) }
    let plan = FilterPlan(stations: stations)
    #expect(plan.spec == "g/KJ7ABC-15/N0CALL/N0CALL-7/W1AW")
    #expect(FilterPlan(stations: stations.reversed()) == plan)
  }

  @Test("tracking adds b/ parts after the g/ parts")
  func tracking() throws {
    let plan = FilterPlan(
      stations: [try StationAddress(parsing: "N0CALL")],
      tracking: [try StationAddress(parsing: "w1aw-9"), try StationAddress(parsing: "KJ7ABC")])
    #expect(plan.spec == "g/N0CALL b/KJ7ABC/W1AW-9")
    #expect(plan.senders == ["KJ7ABC", "W1AW-9"])
  }

  @Test("no stations: an empty spec, a login line without filter")
  func empty() {
    let plan = FilterPlan(stations: [StationAddress]())
    #expect(plan.spec.isEmpty && plan.mode == .live)
    let login = plan.loginLine(
      user: "T2CLOUD", passcode: -1, softwareName: "aprs-cloud", softwareVersion: "1")
    #expect(String(decoding: login, as: UTF8.self) == "user T2CLOUD pass -1 vers aprs-cloud 1\r\n")
  }

  @Test("parts hold at most 30 calls")
  func chunks() {
    let plan = FilterPlan(stations: Self.stations(61, ssids: false))
    #expect(plan.parts.count == 3)
    #expect(plan.parts.map { $0.split(separator: "/").count - 1 } == [30, 30, 1])
    #expect(plan.parts.allSatisfy { $0.hasPrefix("g/") })
    #expect(plan.spec == plan.parts.joined(separator: " "))
  }

  @Test(
    "modes by size: 1, 50, 60, 2000 stations",
    arguments: [(1, FilterMode.live), (50, .live), (60, .login), (2000, .fullFeed)])
  func modes(count: Int, mode: FilterMode) {
    let plan = FilterPlan(stations: Self.stations(count))
    #expect(plan.addressees.count == count)
    #expect(plan.mode == mode)
    if let line = plan.liveLine {
      #expect(line.count <= FilterPlan.maximumLiveLineLength)
      #expect(line.count == plan.liveLineLength)
    } else {
      #expect(plan.liveLineLength > FilterPlan.maximumLiveLineLength)
    }
    let login = plan.loginLine(
      user: "T2CLOUD", passcode: 12345, softwareName: "aprs-cloud", softwareVersion: "1.0.0")
    #expect(login.count <= FilterPlan.maximumLoginLineLength)
    #expect(String(decoding: login, as: UTF8.self).contains(" filter ") == (mode != .fullFeed))
  }

  @Test("the live limit is exact: the longest live line is 510 bytes, one more byte goes to login")
  func liveBoundary() throws {
    // Grow the set until the #filter line no longer fits; every live line on the way must be ≤ 510 bytes.
    var stations: [StationAddress] = []
    var lastLive = 0
    for station in Self.stations(200) {
      stations.append(station)
      let plan = FilterPlan(stations: stations)
      if plan.mode != .live {
        #expect(plan.mode == .login)
        #expect(plan.liveLineLength > 510)
        break
      }
      let line = try #require(plan.liveLine)
      #expect(line.count <= 510)
      lastLive = line.count
    }
    #expect(lastLive > 450)
  }

  @Test("long calls with SSIDs: 50 of them no longer fit a live line")
  func longCalls() {
    let stations = (0..<50).map { try! StationAddress(base: "A\($0 % 10)CDE\($0 / 10)", ssid: 10 + $0 % 6) }
    let plan = FilterPlan(stations: stations)
    #expect(plan.addressees.allSatisfy { $0.utf8.count == 9 })
    #expect(plan.mode == .login)
    #expect(plan.liveLine == nil)
  }
}
