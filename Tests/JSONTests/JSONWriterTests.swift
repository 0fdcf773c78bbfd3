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
