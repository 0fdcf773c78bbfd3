import TestSupport
import Testing

@testable import APRS

/// The planner's ``FilterPlanner/OwnTransmissionRequest`` input: exact `b/` entries for the stations that follow
/// their own transmissions (`ackPolicy:"fallback"`), inside the line's budget, and whom it followed or left out.
@Suite struct FilterPlannerOwnTransmissionTests {
  static func station(_ text: String) -> StationAddress { try! StationAddress(parsing: text) }

  static func requests(_ stations: [StationAddress], from since: Int64 = 0) -> [FilterPlanner
    .OwnTransmissionRequest]
  {
    stations.enumerated().map { .init(station: $0.element, since: since + Int64($0.offset)) }
  }

  @Test("no request: the same line as before, and nobody followed")
  func noRequest() {
    let stations = ["N0CALL", "N0CALL-7", "OH7LZB"].map(Self.station)
    let planner = FilterPlanner(addressees: stations)
    let line = planner.plan(ownTransmissions: [])
    #expect(line == planner.plan())
    #expect(line.ownTransmissions == .none)
  }

  @Test("one station: its exact b/ entry in the compact form, the bytes it costs")
  func oneStation() {
    let stations = ["N0CALL-7", "OH7LZB"].map(Self.station)
    let planner = FilterPlanner(addressees: stations)
    let before = planner.plan()
    let line = planner.plan(ownTransmissions: Self.requests([Self.station("N0CALL-7")]))
    #expect(line.spec == before.spec + " b/N0CALL-7")
    // ` b/` and the entry: the part's first entry needs no `/` of its own.
    #expect(line.byteCount == before.byteCount + 3 + "N0CALL-7".utf8.count)
    #expect(line.ownTransmissions == OwnTransmissionPlan(followed: ["N0CALL-7"], fellBack: []))
    let matcher = AprscCallSet(spec: line.spec, type: "b")
    #expect(matcher.matches("N0CALL-7") && !matcher.matches("N0CALL-8") && !matcher.matches("N0CALL"))
    // Two stations in one b/ part: each further one costs its call and one `/`.
    let two = planner.plan(ownTransmissions: Self.requests(["N0CALL-7", "OH7LZB"].map(Self.station)))
    #expect(two.spec == before.spec + " b/N0CALL-7/OH7LZB/OH7LZB-0")
    #expect(two.byteCount == line.byteCount + "/OH7LZB/OH7LZB-0".utf8.count)
  }

  @Test("no station registered yet: the b/ part alone")
  func onlyOwnTransmissions() {
    let line = FilterPlanner().plan(ownTransmissions: Self.requests([Self.station("N0CALL")]))
    #expect(line.spec == "b/N0CALL/N0CALL-0")
    #expect(
      line.ownTransmissions.followed == ["N0CALL"]
        && line.byteCount == "#filter b/N0CALL/N0CALL-0\r\n".utf8.count)
  }

  @Test("a station tracking or watching already covers: followed for no bytes")
  func alreadyCovered() {
    let stations = ["N0CALL-7", "OH7LZB-9"].map(Self.station)
    let tracked = FilterPlanner(addressees: stations, senders: stations)
    let line = tracked.plan(ownTransmissions: Self.requests(stations))
    #expect(line.spec == tracked.plan().spec)
    #expect(line.ownTransmissions.followed == ["N0CALL-7", "OH7LZB-9"])
    let watched = FilterPlanner(addressees: stations)
    let watching = watched.plan(extraSenders: ["OH7LZB-9"])
    let both = watched.plan(extraSenders: ["OH7LZB-9"], ownTransmissions: Self.requests([stations[1]]))
    #expect(both.spec == watching.spec && both.ownTransmissions.followed == ["OH7LZB-9"])
  }

  @Test("the same requests give the same line whatever their order; duplicates count once")
  func deterministic() {
    var generator = CallGenerator(seed: 0xFA11)
    let stations = generator.stations(60)
    let planner = FilterPlanner(addressees: stations)
    let requests = Self.requests(stations)
    let line = planner.plan(ownTransmissions: requests)
    var random = SplitMix64(seed: 5)
    for _ in 0..<5 {
      let shuffled = requests.shuffled(using: &random) + requests.prefix(3)
      #expect(planner.plan(ownTransmissions: shuffled) == line)
    }
  }

  @Test(
    "50 stations opted in: within the line's bytes, every followed one matched, the rest reported, oldest first"
  )
  func fiftyStations() {
    var generator = CallGenerator(seed: 0x50)
    for registered in [50, 2000] {
      let stations = generator.stations(registered)
      let opted = Array(stations.prefix(50))
      let planner = FilterPlanner(addressees: stations)
      for length in [FilterPlanner.maximumLineLength, FilterPlanner.answerableLineLength] {
        let line = planner.plan(maximumLineLength: length, ownTransmissions: Self.requests(opted))
        #expect(line.byteCount <= length && line.line.count == line.byteCount)
        FilterPlannerTests.checkLine(
          FilterLine(
            spec: line.spec.split(separator: " ")[0].description, addressees: line.addressees, senders: .empty
          ),
          addressees: stations, maximum: length)
        let plan = line.ownTransmissions
        #expect(plan.followed.count + plan.fellBack.count == 50)
        #expect(Set(plan.followed).isDisjoint(with: plan.fellBack))
        #expect(
          !plan.followed.isEmpty && !plan.fellBack.isEmpty, "\(registered) \(length): \(line.byteCount)")
        let matcher = AprscCallSet(spec: line.spec, type: "b")
        for address in plan.followed { #expect(matcher.matches(address), "\(address)") }
        for address in plan.fellBack { #expect(!matcher.matches(address), "\(address)") }
        // Precedence: everything requested before the first station left out was followed.
        let order = opted.map(\.description)
        let firstLeftOut = order.firstIndex(of: plan.fellBack[0])!
        #expect(order.prefix(firstLeftOut).allSatisfy(plan.followed.contains))
        #expect(plan.fellBack == order.filter(plan.fellBack.contains))
        print(
          "\(registered) registered, 50 opted in, \(length)-byte budget: \(plan.followed.count) followed,",
          "\(plan.fellBack.count) fell back, line \(line.byteCount) bytes")
      }
    }
  }

  @Test("the own entries take what the extra entries leave, never the room of the widest plan")
  func sharesExtraRoom() {
    let stations = (0..<30).map {
      Self.station("KJ\($0 % 10)A\(FilterPlannerTests.letter($0 / 10))C-1\($0 % 6)")
    }
    let planner = FilterPlanner(addressees: stations)
    let room = FilterPlanner.maximumExtraBytes(maximumLineLength: FilterPlanner.maximumLineLength)
    let all = planner.plan(ownTransmissions: Self.requests(stations))
    let used = FilterEntryFit.bytes(all.ownTransmissions.followed)
    #expect(used <= room && used + 10 > room)
    let extras = (0..<10).map { "WATCH-\($0 + 1)" }
    let crowded = planner.plan(extraSenders: extras, ownTransmissions: Self.requests(stations))
    #expect(crowded.ownTransmissions.followed.count < all.ownTransmissions.followed.count)
    #expect(FilterEntryFit.bytes(crowded.ownTransmissions.followed) + FilterEntryFit.bytes(extras) <= room)
  }
}
