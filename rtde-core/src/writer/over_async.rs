//! The writes over the async driver: the same groups and the same writes, awaited.

use crate::tokio::AsyncClient;
use crate::writer::write::IoWrite;
use crate::writer::{IoConfig, IoWriter, WriteError};

impl IoWriter {
    /// As [`IoWriter::setup`], over the async driver: one input recipe per group of
    /// `config`, set up before [`AsyncClient::start`].
    ///
    /// ```no_run
    /// use rtde_core::writer::{IoConfig, IoWrite, IoWriter};
    /// use rtde_core::{ConnectOptions, DynamicRecipe, RTDE_PORT, Recipe};
    ///
    /// # async fn f() -> Result<(), Box<dyn std::error::Error>> {
    /// let (client, connection) =
    ///     rtde_core::tokio::connect(("192.168.1.10", RTDE_PORT), ConnectOptions::new()).await?;
    /// tokio::spawn(connection);
    /// let outputs = DynamicRecipe::outputs(["actual_digital_output_bits"])?;
    /// client.setup_outputs(outputs.spec(), 125.0).await?;
    /// let io = IoWriter::setup_async(&client, &IoConfig::new().digital_outputs()).await?;
    /// client.start().await?;
    /// // Standard digital output 3 on: the mask selects bit 3 and nothing else.
    /// io.send_async(&client, &IoWrite::standard_digital_output(3, true)?).await?;
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// As [`IoWriter::setup`].
    pub async fn setup_async(
        client: &AsyncClient,
        config: &IoConfig,
    ) -> Result<IoWriter, WriteError> {
        let writes = config.empty_writes()?;
        let mut handles = Vec::with_capacity(writes.len());
        for w in &writes {
            handles.push((
                w.group(),
                client.setup_inputs(crate::Recipe::spec(w)).await?,
            ));
        }
        Ok(IoWriter { handles })
    }

    /// As [`IoWriter::send`], through the async driver ([`AsyncClient::send`]): one write,
    /// built with [`IoWrite`]'s constructors (which set the masks), through its group's
    /// recipe.
    ///
    /// # Errors
    /// As [`IoWriter::send`]; the errors of [`AsyncClient::send`].
    pub async fn send_async(
        &self,
        client: &AsyncClient,
        write: &IoWrite,
    ) -> Result<(), WriteError> {
        client.send(self.handle_of(write)?, write).await?;
        Ok(())
    }
}
