print("aprs-listener placeholder")
