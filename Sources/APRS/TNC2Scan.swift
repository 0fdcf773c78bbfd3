/// Offsets of a packet's parts inside a byte buffer: the allocation-free result of a scan.
struct TNC2Scan {
  var source: Range<Int>
  var destination: Range<Int>
  /// From after the destination's `,` to before the `:`; empty when there is no path.
  var path: Range<Int>
  /// From after the first `:` to the end (line ending already gone).
  var information: Range<Int>
}
