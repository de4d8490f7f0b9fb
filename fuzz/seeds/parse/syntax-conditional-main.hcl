locals {
  p    = req.composite.spec.parameters
  size = p.size
}

resource cond {
  body = {
    apiVersion = "v1"
    kind       = "ConfigMap"
    metadata   = { name = "cond" }
    data = {
      simple    = p.env == "prod" ? "large" : "small"
      nested    = size > 100 ? "huge" : size > 10 ? "big" : "tiny"
      mixedType = p.env == "prod" ? 1 : "one"
      numOrNull = p.env == "dev" ? 5 : null
      listPick  = length(p.zones) > 1 ? p.zones : ["fallback"]
      objPick   = p.env == "prod" ? { tier = "gold" } : { tier = "bronze" }
      tryCond   = try(p.optional, null) != null ? "set" : "unset"
      inTpl     = "mode-${p.env == "prod" ? "ha" : "single"}"
    }
  }
}
