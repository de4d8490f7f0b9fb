composite status {
  body = { n = self.name }
}
