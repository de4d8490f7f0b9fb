locals {
  keyName = "dynamic"
  prefix  = "app.example.com"
}

resource keys {
  body = {
    apiVersion : "v1"
    kind : "ConfigMap"
    metadata : {
      name = "keys"
      labels = {
        "${prefix}/team"      = "core"
        (keyName)             = "from-paren"
        "quoted-key"          = "q"
        bare-dash             = "d"
      }
    }
    data = {
      colon : "c"
      equals = "e"
      "with space" = "s"
      "123" = "numeric string key"
      nestedMixed = { a : 1, b = 2 }
      commaSep    = { x = 1, y = 2, }
    }
  }
}
