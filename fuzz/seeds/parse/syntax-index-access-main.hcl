locals {
  p      = req.composite.spec.parameters
  labels = req.composite.metadata.labels
  matrix = [[1, 2], [3, 4]]
}

resource access {
  body = {
    apiVersion = "v1"
    kind       = "ConfigMap"
    metadata   = { name = "access" }
    data = {
      first       = p.zones[0]
      last        = p.zones[length(p.zones) - 1]
      legacyIndex = p.zones.1
      dashedKey   = labels["app.kubernetes.io/name"]
      dottedAttr  = labels.team
      quotedAttr  = p["nested"]["inner-key"]
      matrix      = matrix[1][0]
      strKeyIndex = { a = "x" }["a"]
      numAsKey    = { "1" = "one" }[1]
      listNumStr  = p.zones["0"]
    }
  }
}
