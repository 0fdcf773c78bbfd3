import Testing

@testable import Store

@Suite struct ActivityHistoryTests {
  static let t0: Int64 = 1_800_000_000_000  // a whole minute

  @Test func countsGoToTheirMinuteAndTheHourIsKept() {
    var history = ActivityHistory()
    history.add(lines: 10, stored: 1, acks: 1, at: Self.t0 + 5_000)
    history.add(lines: 5, stored: 0, acks: 0, at: Self.t0 + 59_999)
    history.add(lines: 7, stored: 2, acks: 2, at: Self.t0 + 60_000)
    #expect(
      history.minutes == [
        .init(start: Self.t0, lines: 15, stored: 1, acks: 1),
        .init(start: Self.t0 + 60_000, lines: 7, stored: 2, acks: 2),
      ])
    // 61 minutes later only the newest hour is left; a clock step back adds to the newest minute.
    history.add(lines: 1, stored: 0, acks: 0, at: Self.t0 + 61 * 60_000)
    #expect(history.minutes.map(\.start) == [Self.t0 + 61 * 60_000])
    history.add(lines: 2, stored: -5, acks: 0, at: Self.t0)
    #expect(history.minutes == [.init(start: Self.t0 + 61 * 60_000, lines: 3, stored: 0, acks: 0)])
  }

  @Test func theSeriesHasSixtyMinutesWithZerosWhereNothingHappened() {
    var history = ActivityHistory()
    history.add(lines: 4, stored: 1, acks: 0, at: Self.t0 - 120_000)
    let series = history.series(endingAt: Self.t0 + 30_000)
    #expect(
      series.count == 60 && series.last?.start == Self.t0 && series.first?.start == Self.t0 - 59 * 60_000)
    #expect(series[57].lines == 4 && series.filter { $0.lines > 0 }.count == 1)
  }

  @Test func theTextRoundTripsAndGarbleIsSkipped() {
    var history = ActivityHistory()
    history.add(lines: 3, stored: 2, acks: 1, at: Self.t0)
    history.add(lines: 9, stored: 0, acks: 0, at: Self.t0 + 60_000)
    #expect(history.text == "\(Self.t0):3,2,1;\(Self.t0 + 60_000):9,0,0")
    #expect(ActivityHistory(text: history.text) == history)
    let garbled = ActivityHistory(
      text: "x;\(Self.t0 + 1):1,1,1;\(Self.t0):1,-1,1;\(Self.t0):1,2;\(Self.t0):4,5,6;;")
    #expect(garbled.minutes == [.init(start: Self.t0, lines: 4, stored: 5, acks: 6)])
    #expect(ActivityHistory(text: "").minutes.isEmpty)
  }
}
