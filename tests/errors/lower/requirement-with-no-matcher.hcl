requirement cfg {
  select {
    apiVersion = "v1"
    kind       = "ConfigMap"
  }
}
