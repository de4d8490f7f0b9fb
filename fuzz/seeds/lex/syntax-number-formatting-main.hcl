locals {
  fromReq = req.composite.spec.parameters
}

resource numbers {
  body = {
    apiVersion = "v1"
    kind       = "ConfigMap"
    metadata   = { name = "numbers" }
    data = {
      int        = 42
      negative   = -17
      float      = 3.14159
      exp        = 1e3
      smallExp   = 1.5e-7
      tiny       = 0.000001
      huge       = 2.5e20
      hugeInt    = 12345678901234567890
      maxSafe    = 9007199254740993
      third      = 1 / 3
      twoThirds  = 2 / 3
      tenth      = 0.1 + 0.2
      negZero    = -0
      reqInt     = fromReq.int
      reqFloat   = fromReq.float
      reqBig     = fromReq.big
      strThird   = tostring(1 / 3)
      strTenth   = tostring(0.1 + 0.2)
      strBig     = tostring(12345678901234567890)
      strReqBig  = tostring(fromReq.big)
      fmtFloat   = format("%.2f", 2 / 3)
      tplFloat   = "v=${1 / 4}"
    }
  }
}
