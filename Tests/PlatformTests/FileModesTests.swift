import Platform
import Testing

#if canImport(Glibc)
  import Glibc
#endif

@Suite struct FileModesTests {
  @Test func privateUnlessTheFolderIsGroupShared() {
    #expect(FileModes.mask(folderMode: nil) == 0o077, "no folder yet")
    #expect(FileModes.mask(folderMode: S_IFDIR | 0o755) == 0o077)
    #expect(FileModes.mask(folderMode: S_IFDIR | 0o770) == 0o077, "group-writable alone is not shared")
    #expect(FileModes.mask(folderMode: S_IFDIR | 0o2770) == 0o007, "the VPS guide's database folder")
    #expect(FileModes.mask(folderMode: S_IFDIR | 0o2750) == 0o027, "the VPS guide's backup folder")
    #expect(FileModes.mask(folderMode: S_IFREG | 0o2770) == 0o077, "not a folder")
  }

  @Test func theFolderOfAPath() {
    #expect(FileModes.folder(of: "/var/lib/aprs-cloud/aprs-cloud.sqlite") == "/var/lib/aprs-cloud")
    #expect(FileModes.folder(of: "/aprs.sqlite") == "/")
    #expect(FileModes.folder(of: "aprs.sqlite") == ".")
    #expect(FileModes.folder(of: "var/aprs.sqlite") == "var")
  }
}
