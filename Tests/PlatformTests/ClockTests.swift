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

@Suite struct SteadyClockTests {
  @Test func advancesWithTheMonotonicClockFromItsAnchorRaisedToAFloor() {
    let clock = SteadyClock(epochMs: 1_800_000_000_000, monotonicMs: 500)
    #expect(clock.now(monotonicMs: 500) == 1_800_000_000_000)
    #expect(clock.now(monotonicMs: 31_500) == 1_800_000_031_000)
    let raised = SteadyClock(epochMs: 1_800_000_000_000, monotonicMs: 500, floorMs: 1_800_003_600_000)
    #expect(raised.now(monotonicMs: 1_500) == 1_800_003_601_000)
  }

  @Test func theProcessClockNeverGoesBackAndCanBeRaised() {
    let first = steadyEpochMilliseconds()
    let target = first + 3_600_000
    raiseSteadyClock(toAtLeast: target)
    let raised = steadyEpochMilliseconds()
    #expect(raised >= target)
    raiseSteadyClock(toAtLeast: first)  // never back
    #expect(steadyEpochMilliseconds() >= raised)
  }
}

@Suite struct WallClockStepsTests {
  @Test(arguments: [3_600_000, -3_600_000, 7_200_000] as [Int64])
  func aStepIsTheDifferenceBetweenTheWallAndTheMonotonicClock(step: Int64) {
    var steps = WallClockSteps()
    #expect(steps.observe(wallMs: 1_800_000_000_000, monotonicMs: 10_000) == 0)
    #expect(steps.observe(wallMs: 1_800_000_001_000, monotonicMs: 11_000) == 0)
    #expect(steps.observe(wallMs: 1_800_000_002_000 + step, monotonicMs: 12_000) == step)
    #expect(steps.observe(wallMs: 1_800_000_003_000 + step, monotonicMs: 13_000) == 0)
  }

  @Test func slewingAndJitterBelowTheToleranceAreNoStep() {
    var steps = WallClockSteps()
    _ = steps.observe(wallMs: 0, monotonicMs: 0)
    #expect(steps.observe(wallMs: 60_030, monotonicMs: 60_000) == 0)
    #expect(steps.observe(wallMs: 61_030 + 1_900, monotonicMs: 61_000) == 0)
    #expect(steps.observe(wallMs: 63_930 - 2_500, monotonicMs: 62_000) == -2_500)
  }
}
