-- A claim governs only the devices it brought or adopted (docs/design.md "Who may do what"): a keyless device
-- registered before the station was claimed receives as it would without the claim, and that includes the ACKs
-- its app asked for. `ack_messages` is the `ackMessages` of the device's last register (NULL: none carried), kept
-- for every device whether or not the station's policy follows it. Devices already stored take the value the
-- station last recorded from a register.
ALTER TABLE devices ADD COLUMN ack_messages INTEGER CHECK (ack_messages IS NULL OR ack_messages IN (0, 1));
UPDATE devices SET ack_messages = (
  SELECT stations.register_ack_messages FROM stations WHERE stations.address = devices.station);
