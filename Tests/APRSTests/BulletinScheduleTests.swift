import Testing

@testable import APRS

/// Bulletins every 20 minutes for 4 hours, announcements hourly for 4 days (XRouter's APRS message server).
@Suite struct BulletinScheduleTests {
  @Test func addresseesAreBulletinsOrAnnouncements() {
    #expect(BulletinSchedule(addressee: "bln3wx")?.kind == .bulletin)
    #expect(BulletinSchedule(addressee: "BLN0")?.addressee == "BLN0")
    #expect(BulletinSchedule(addressee: "BLNA")?.kind == .announcement)
    #expect(BulletinSchedule(addressee: "BLNQHOTG")?.kind == .announcement)
    for bad in ["BLN", "BLN3WX/", "BLN-1", "BLN3TOOLONG", "OH7LZB", "BLN 3", ""] {
      #expect(BulletinSchedule(addressee: bad) == nil, "\(bad)")
    }
  }

  @Test func aBulletinGoes13TimesOver4Hours() throws {
    let schedule = try #require(BulletinSchedule(addressee: "BLN1"))
    #expect(schedule.intervalMs == 1_200_000 && schedule.durationMs == 14_400_000 && schedule.sendCount == 13)
    var sends: [Int64] = [0]
    while let next = schedule.nextSend(after: sends.last!, start: 0) { sends.append(next) }
    #expect(sends.count == 13 && sends.last == 14_400_000)
    // A late send does not shift the grid; a clock step back restarts from the first.
    #expect(schedule.nextSend(after: 1_500_000, start: 0) == 2_400_000)
    #expect(schedule.nextSend(after: -5, start: 0) == 1_200_000)
  }

  @Test func anAnnouncementGoesHourlyFor4Days() throws {
    let schedule = try #require(BulletinSchedule(addressee: "BLNB"))
    #expect(schedule.sendCount == 97)
    let hour: Int64 = 3_600_000
    let last = schedule.nextSend(after: 95 * hour, start: 0)
    #expect(last == 96 * hour)
    #expect(schedule.nextSend(after: 96 * hour, start: 0) == nil)
  }
}
