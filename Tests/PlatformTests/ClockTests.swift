import Platform
import Testing

#if canImport(Glibc)
  import Glibc
#endif

@Suite struct ClockTests {
  @Test func monotonicClockNeverGoesBackAndUnitsAgree() {
    let firstMs = monotonicMilliseconds()
    let us = monotonicMicroseconds()
    let secondMs = monotonicMilliseconds()
    #expect(firstMs <= secondMs)
    #expect(firstMs <= us / 1000 && us / 1000 <= secondMs)
  }

  @Test func epochClockIsWallTime() {
    let now = epochMilliseconds()
    #expect(now > 1_700_000_000_000)  // after 2023-11
    #expect(now < 4_102_444_800_000)  // before 2100
    let us = clockMicroseconds(CLOCK_REALTIME)
    #expect(abs(us / 1000 - now) < 60_000)
  }

  @Test func epochClockIsInjectable() {
    let fixed: EpochClock = { 1_795_960_800_123 }
    let system: EpochClock = epochMilliseconds
    #expect(fixed() == 1_795_960_800_123)
    #expect(system() > 0)
  }
}
