import TestSupport
import Testing

@testable import APRS

@Suite struct PrefixTrieTests {
  @Test("packed keys sort like the addresses and keep each prefix in one range")
  func packing() throws {
    let calls = ["N0C", "N0CALL", "N0CALL-1", "N0CALL-15", "N0CALL-7", "N0CB", "A", "ZZZZZZZZZ", "9A1AA-7"]
    let keys = calls.map { PackedCall.pack(Array($0.utf8))! }
    #expect(keys.map(PackedCall.string) == calls)
    #expect(zip(keys, calls).sorted { $0.0 < $1.0 }.map(\.1) == calls.sorted())
    #expect(keys.map(PackedCall.length) == calls.map(\.utf8.count))
    let prefix = PackedCall.pack(Array("N0CALL".utf8))!
    let end = prefix + PackedCall.span(depth: 6)
    #expect(keys.filter { $0 >= prefix && $0 < end }.count == 4)
    #expect(PackedCall.prefix(keys[4], depth: 3) == keys[0])
    #expect(PackedCall.pack(Array("n0call".utf8)) == nil)
    #expect(PackedCall.pack(Array("ABCDEFGHIJ".utf8)) == nil)
    #expect(PackedCall.pack([UInt8]()) == nil)
    #expect(
      PackedCall.pack(try StationAddress(parsing: "kj7abc-15")) == PackedCall.pack(Array("KJ7ABC-15".utf8)))
  }

  @Test("inserts, removes and lookups agree with a sorted array, across chunk splits and merges")
  func againstReference() {
    var random = SplitMix64(seed: 11)
    var trie = PrefixTrie()
    var reference = Set<UInt64>()
    let universe = (0..<5000).map { _ in UInt64.random(in: 1..<(1 << 54), using: &random) }
    for step in 0..<40_000 {
      let key = universe.randomElement(using: &random)!
      // Grow, then shrink to nothing, so chunks split and later merge and vanish.
      if step < 20_000
        ? Int.random(in: 0..<4, using: &random) > 0 : Int.random(in: 0..<4, using: &random) == 0
      {
        #expect(trie.insert(key) == reference.insert(key).inserted)
      } else {
        #expect(trie.remove(key) == (reference.remove(key) != nil))
      }
      if step % 5000 == 4999 {
        let sorted = reference.sorted()
        #expect(trie.keys == sorted)
        #expect(trie.count == sorted.count)
        for probe in universe.prefix(200) {
          #expect(trie.contains(probe) == reference.contains(probe))
          #expect(trie.first(atLeast: probe) == sorted.first { $0 >= probe })
        }
      }
    }
    for key in universe { trie.remove(key) }
    #expect(trie.isEmpty && trie.keys.isEmpty && trie.exactBytes == 0 && trie.first(atLeast: 0) == nil)
  }

  @Test("a bulk build equals the same keys inserted one by one")
  func bulk() {
    var generator = CallGenerator(seed: 9)
    let keys = generator.stations(3000).map(PackedCall.pack)
    var oneByOne = PrefixTrie()
    for key in keys { oneByOne.insert(key) }
    let bulk = PrefixTrie(keys: keys + keys.prefix(10))
    #expect(bulk.keys == oneByOne.keys)
    #expect(bulk.count == 3000 && bulk.exactBytes == oneByOne.exactBytes)
    #expect(bulk.exactBytes == keys.reduce(0) { $0 + PackedCall.entryBytes($1) })
  }

  @Test("the model: shares of prefixes add up and narrow with every character")
  func model() {
    let model = AddresseeModel.callsigns
    #expect(model.share(ofPrefix: "") == 1)
    let firsts = CallGenerator.characters.map { model.share(ofPrefix: String($0)) }
    #expect(abs(firsts.reduce(0, +) - 1) < 1e-12)
    #expect(abs(model.share(ofPrefix: "K") - (0.95 / 26 + 0.05 / 37)) < 1e-12)
    // A digit after the first letter (one-letter prefix) is likelier than any one second letter.
    #expect(model.share(ofPrefix: "K1") > model.share(ofPrefix: "KJ"))
    #expect(model.share(ofPrefix: "k") == 0 && model.share(ofPrefix: "ABCDEFGHIJ") == 0)
    for prefix in ["K", "KJ", "KJ7", "KJ7A", "N0CALL", "N0CALL-1", "K1A"] {
      let children = CallGenerator.characters.map { model.share(ofPrefix: prefix + String($0)) }
      let sum = children.reduce(0, +)
      #expect(sum <= model.share(ofPrefix: prefix) * (1 + 1e-12), "\(prefix)")
    }
    // K1A: first letter K, one-letter prefix and digit 1, suffix starting with A; plus the other 5 %.
    let k1a = 0.95 / (26.0 * 2 * 10 * 26) + 0.05 / (37.0 * 37 * 37)
    #expect(abs(model.share(ofPrefix: "K1A") - k1a) < 1e-15)
    let ssids = ["", "-1", "-2", "-10"].map { model.share(ofPrefix: "K1A" + $0) }
    #expect(ssids[1] > ssids[2] && ssids[2] > 0 && ssids[3] < ssids[2])
  }
}
