requirement cfg {
  select {
    apiVersion = "v1"
    kind       = "ConfigMap"
    matchName  = "a"
    matchLabels = { a = "b" }
  }
}
