// Package all is the default set of provider adapters: every family's, keyed by the provider
// names a Target carries (Default). It is the one package that names every family, so that cmd
// wires them in one call and no family, nor the contract, depends on another family.
//
// It imports the contract (gateway/providers) and the families; nothing imports it but cmd and
// tests. It never imports http/, commands/, projections/ or a database driver.
package all
