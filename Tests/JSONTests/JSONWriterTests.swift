import JSON
import Testing

@Suite struct JSONWriterTests {
  @Test func writesCompactObjectsWithCommas() {
    var writer = JSONWriter()
    writer.beginObject()
    writer.key("messages")
    writer.beginArray()
    for seq in ["42", nil] {
      writer.beginObject()
      writer.key("seqId")
      writer.stringOrNull(seq)
      writer.key("timestamp")
      writer.int(Int64(1_700_000_000_001))
      writer.endObject()
    }
    writer.endArray()
    writer.key("ok")
    writer.bool(true)
    writer.endObject()
    #expect(
      writer.string
        == #"{"messages":[{"seqId":"42","timestamp":1700000000001},{"seqId":null,"timestamp":1700000000001}],"ok":true}"#
    )
  }

  @Test func escapesEverythingJSONRequires() throws {
    var writer = JSONWriter()
    let nasty = "q\"b\\n\n r\r t\t \u{00} \u{1F} \u{7F} é 😀 </script>"
    writer.string(nasty)
    #expect(writer.string == #""q\"b\\n\n r\r t\t \u0000 \u001f \u007f é 😀 </script>""#)
    #expect(try JSONParser.parse(writer.bytes) == .string(nasty))
  }

  @Test func roundTripsParsedValues() throws {
    let text = #"{"a":[1,-2.5e3,true,false,null,{"b":"c"}],"d":{}}"#
    var writer = JSONWriter()
    writer.value(try JSONParser.parse(Array(text.utf8)))
    #expect(writer.string == text)
  }
}

@Suite struct JSONWriterFixedTests {
  private func written(_ value: Double, _ decimals: Int) -> String {
    var writer = JSONWriter(capacity: 16)
    writer.fixed(value, decimals: decimals)
    return String(decoding: writer.bytes, as: UTF8.self)
  }

  @Test func fixedNumbersRoundAndDropTrailingZeros() {
    #expect(written(41.5, 6) == "41.5")
    #expect(written(-81.1234564, 6) == "-81.123456")
    #expect(written(-81.1234565, 6) == "-81.123457" || written(-81.1234565, 6) == "-81.123456")
    #expect(written(0.000001, 6) == "0.000001")
    #expect(written(-0.0000001, 6) == "0")
    #expect(written(12, 6) == "12")
    #expect(written(3.14159, 2) == "3.14")
    #expect(written(0.05, 1) == "0.1")
  }

  @Test func nonFiniteAndHugeValuesAreNull() {
    #expect(written(.infinity, 6) == "null")
    #expect(written(.nan, 6) == "null")
    #expect(written(1e16, 2) == "null")
  }
}
